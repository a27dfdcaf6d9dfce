// Weight rows of one tensor type, decoded 32 elements (a "chunk") at a time, operation for
// operation as kernels/cpu/generic/ decodes them (the `precise` products and differences are
// never fused into an fma, so the values are the CPU's bit for bit). The including shader declares
// `w_words`, the weight bytes as 32-bit words; a row starts at any even byte offset.
// Exactly one HEARTH_W_<TYPE> is defined by the build. The plain types (f16, f32) allow rows of
// any length: load_one() decodes the elements past the last whole chunk (HAS_TAIL).

uint w_u8(uint off) { return (w_words[off >> 2] >> ((off & 3u) << 3)) & 0xffu; }
uint w_u16(uint off) { return (w_words[off >> 2] >> ((off & 2u) << 3)) & 0xffffu; }   // off even
int w_i8(uint off) { return int(w_u8(off) << 24) >> 24; }

float chunk_vals[32];
// For the types whose activations the CPU quantizes to q8_0 (q8_0, q4_0, q5_0): the chunk's
// integer quants and scale, so the product is the CPU's sum(q_w * q_x) * (d_w * d_x) per block.
int chunk_q[32];
float chunk_d;

#if HEARTH_W_Q8_0
#define HAS_INT_QUANTS 1
void load_chunk_q(uint row, uint c) {
    const uint b = row + c * 34u;
    chunk_d = half_to_float(w_u16(b));
    [[unroll]] for (uint j = 0u; j < 32u; ++j) chunk_q[j] = w_i8(b + 2u + j);
}
void load_chunk(uint row, uint c) {
    const uint b = row + c * 34u;
    const float d = half_to_float(w_u16(b));
    [[unroll]] for (uint j = 0u; j < 32u; ++j) {
        precise float v = float(w_i8(b + 2u + j)) * d;
        chunk_vals[j] = v;
    }
}
#elif HEARTH_W_Q4_0
#define HAS_INT_QUANTS 1
void load_chunk_q(uint row, uint c) {
    const uint b = row + c * 18u;
    chunk_d = half_to_float(w_u16(b));
    [[unroll]] for (uint j = 0u; j < 16u; ++j) {
        const uint q = w_u8(b + 2u + j);
        chunk_q[j] = int(q & 0x0fu) - 8;
        chunk_q[j + 16u] = int(q >> 4) - 8;
    }
}
void load_chunk(uint row, uint c) {
    const uint b = row + c * 18u;   // f16 d, 16 bytes of nibbles
    const float d = half_to_float(w_u16(b));
    [[unroll]] for (uint j = 0u; j < 16u; ++j) {
        const uint q = w_u8(b + 2u + j);
        precise float v0 = d * float(int(q & 0x0fu) - 8);
        precise float v1 = d * float(int(q >> 4) - 8);
        chunk_vals[j] = v0;
        chunk_vals[j + 16u] = v1;
    }
}
#elif HEARTH_W_Q5_0
#define HAS_INT_QUANTS 1
void load_chunk_q(uint row, uint c) {
    const uint b = row + c * 22u;
    chunk_d = half_to_float(w_u16(b));
    const uint qh = w_u16(b + 2u) | (w_u16(b + 4u) << 16);
    [[unroll]] for (uint j = 0u; j < 16u; ++j) {
        const uint q = w_u8(b + 6u + j);
        chunk_q[j] = (int(q & 0x0fu) | (int((qh >> j) & 1u) << 4)) - 16;
        chunk_q[j + 16u] = (int(q >> 4) | (int((qh >> (j + 16u)) & 1u) << 4)) - 16;
    }
}
void load_chunk(uint row, uint c) {
    const uint b = row + c * 22u;
    const float d = half_to_float(w_u16(b));
    const uint qh = w_u16(b + 2u) | (w_u16(b + 4u) << 16);
    [[unroll]] for (uint j = 0u; j < 16u; ++j) {
        const uint q = w_u8(b + 6u + j);
        const int h0 = int((qh >> j) & 1u) << 4;
        const int h1 = int((qh >> (j + 16u)) & 1u) << 4;
        precise float v0 = d * float((int(q & 0x0fu) | h0) - 16);
        precise float v1 = d * float((int(q >> 4) | h1) - 16);
        chunk_vals[j] = v0;
        chunk_vals[j + 16u] = v1;
    }
}
#elif HEARTH_W_Q4_K
// The 6-bit scale and min of sub-block j, as kernels/blocks.h k_scale_min.
void k_scale_min(uint scales, uint j, out uint sc, out uint m) {
    if (j < 4u) {
        sc = w_u8(scales + j) & 63u;
        m = w_u8(scales + j + 4u) & 63u;
    } else {
        sc = (w_u8(scales + j + 4u) & 0xfu) | ((w_u8(scales + j - 4u) >> 6) << 4);
        m = (w_u8(scales + j + 4u) >> 4) | ((w_u8(scales + j) >> 6) << 4);
    }
}
void load_chunk(uint row, uint c) {
    const uint b = row + (c >> 3) * 144u;
    const uint j = c & 7u;
    const float d = half_to_float(w_u16(b));
    const float dmin = half_to_float(w_u16(b + 2u));
    uint sc, m;
    k_scale_min(b + 4u, j, sc, m);
    precise float d1 = d * float(sc);
    precise float m1 = dmin * float(m);
    const uint qs = b + 16u + (j >> 1) * 32u;
    const uint shift = (j & 1u) * 4u;
    [[unroll]] for (uint l = 0u; l < 32u; ++l) {
        precise float v = d1 * float((w_u8(qs + l) >> shift) & 0x0fu) - m1;
        chunk_vals[l] = v;
    }
}
#elif HEARTH_W_Q6_K
void load_chunk(uint row, uint c) {
    const uint b = row + (c >> 3) * 210u;
    const uint h = (c & 7u) >> 2;    // which half of 128
    const uint g = c & 3u;           // which 32 of the half
    const float d = half_to_float(w_u16(b + 208u));
    const uint ql = b + h * 64u + (g & 1u) * 32u;
    const uint qh = b + 128u + h * 32u;
    const uint sc = b + 192u + h * 8u + g * 2u;
    const uint lshift = (g >> 1) * 4u;
    const uint hshift = g * 2u;
    [[unroll]] for (uint l = 0u; l < 32u; ++l) {
        const int q = int(((w_u8(ql + l) >> lshift) & 0x0fu) | (((w_u8(qh + l) >> hshift) & 3u) << 4)) - 32;
        precise float v = d * float(w_i8(sc + l / 16u)) * float(q);
        chunk_vals[l] = v;
    }
}
#elif HEARTH_W_F16
#define HAS_TAIL 1
float load_one(uint row, uint i) { return half_to_float(w_u16(row + 2u * i)); }
void load_chunk(uint row, uint c) {
    [[unroll]] for (uint j = 0u; j < 32u; ++j) chunk_vals[j] = load_one(row, c * 32u + j);
}
#elif HEARTH_W_F32
#define HAS_TAIL 1
float load_one(uint row, uint i) { return uintBitsToFloat(w_words[(row >> 2) + i]); }   // rows 4-aligned
void load_chunk(uint row, uint c) {
    [[unroll]] for (uint j = 0u; j < 32u; ++j) chunk_vals[j] = load_one(row, c * 32u + j);
}
#else
#error "one HEARTH_W_<TYPE> must be defined"
#endif
