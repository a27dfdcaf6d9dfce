// Weight rows of one tensor type, decoded 32 elements (a "chunk") at a time, operation for
// operation as kernels/cpu/generic/ decodes them (the `precise` products and differences are
// never fused into an fma, so the values are the CPU's bit for bit). The including shader declares
// `w_words`, the weight bytes as 32-bit words; a row starts at any even byte offset.
// Exactly one HEARTH_W_<TYPE> is defined by the build. The plain types (f16, f32) allow rows of
// any length: load_one() decodes the elements past the last whole chunk (HAS_TAIL).

uint w_u8(uint off) { return (w_words[off >> 2] >> ((off & 3u) << 3)) & 0xffu; }
uint w_u16(uint off) { return (w_words[off >> 2] >> ((off & 2u) << 3)) & 0xffffu; }   // off even
int w_i8(uint off) { return int(w_u8(off) << 24) >> 24; }
uint w_u32(uint off) {   // the 4 bytes from an even offset, little-endian
    const uint i = off >> 2;
    if ((off & 2u) == 0u) return w_words[i];
    return (w_words[i] >> 16) | (w_words[i + 1u] << 16);
}

float chunk_vals[32];
// For the types whose products take quantized activations (q8_0 for q8_0, q4_0, q5_0; q8_K for
// q4_K, q6_K): the chunk's integer quants as four int8 a word (element 4i + k in byte k of
// chunk_p[i]) and its scales, so the product is the CPU's integer sums times its float scales.
uint chunk_p[8];
float chunk_d;
#if HEARTH_W_Q4_K
float chunk_dmin;   // q4_K: the block's dmin; chunk_sc, chunk_m the sub-block's 6-bit scale and min
int chunk_sc;
int chunk_m;
#elif HEARTH_W_Q6_K
int chunk_sc0;      // q6_K: the scales of the chunk's two sub-blocks of 16
int chunk_sc1;
#endif

// Bytes b (each < 0x80) of v minus k (k <= 0x80), as int8: no borrow crosses a byte.
uint sub_bytes(uint v, uint k) { return ((v | 0x80808080u) - k * 0x01010101u) ^ 0x80808080u; }

#if HEARTH_W_Q8_0
void load_chunk_packed(uint row, uint c) {
    const uint b = row + c * 34u;
    chunk_d = half_to_float(w_u16(b));
    [[unroll]] for (uint i = 0u; i < 8u; ++i) chunk_p[i] = w_u32(b + 2u + 4u * i);
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
void load_chunk_packed(uint row, uint c) {   // element j: low nibble of byte j, j + 16: its high one
    const uint b = row + c * 18u;
    chunk_d = half_to_float(w_u16(b));
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {
        const uint q = w_u32(b + 2u + 4u * i);
        chunk_p[i] = sub_bytes(q & 0x0f0f0f0fu, 8u);
        chunk_p[i + 4u] = sub_bytes((q >> 4) & 0x0f0f0f0fu, 8u);
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
// Bits 0-3 of h to bit 4 of bytes 0-3.
uint spread_bits4(uint h) { return ((h & 1u) << 4) | ((h & 2u) << 11) | ((h & 4u) << 18) | ((h & 8u) << 25); }
void load_chunk_packed(uint row, uint c) {   // the fifth bit of element j is bit j of qh
    const uint b = row + c * 22u;
    chunk_d = half_to_float(w_u16(b));
    const uint qh = w_u16(b + 2u) | (w_u16(b + 4u) << 16);
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {
        const uint q = w_u32(b + 6u + 4u * i);
        chunk_p[i] = sub_bytes((q & 0x0f0f0f0fu) | spread_bits4(qh >> (4u * i)), 16u);
        chunk_p[i + 4u] = sub_bytes(((q >> 4) & 0x0f0f0f0fu) | spread_bits4(qh >> (16u + 4u * i)), 16u);
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
void load_chunk_packed(uint row, uint c) {   // the nibbles 0..15 as they are; the min apart (q8_K's bsums)
    const uint b = row + (c >> 3) * 144u;
    const uint j = c & 7u;
    chunk_d = half_to_float(w_u16(b));
    chunk_dmin = half_to_float(w_u16(b + 2u));
    uint sc, m;
    k_scale_min(b + 4u, j, sc, m);
    chunk_sc = int(sc);
    chunk_m = int(m);
    const uint qs = b + 16u + (j >> 1) * 32u;
    const uint shift = (j & 1u) * 4u;
    [[unroll]] for (uint i = 0u; i < 8u; ++i) chunk_p[i] = (w_u32(qs + 4u * i) >> shift) & 0x0f0f0f0fu;
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
void load_chunk_packed(uint row, uint c) {
    const uint b = row + (c >> 3) * 210u;
    const uint h = (c & 7u) >> 2;
    const uint g = c & 3u;
    chunk_d = half_to_float(w_u16(b + 208u));
    const uint ql = b + h * 64u + (g & 1u) * 32u;
    const uint qh = b + 128u + h * 32u;
    const uint sc = b + 192u + h * 8u + g * 2u;
    chunk_sc0 = w_i8(sc);
    chunk_sc1 = w_i8(sc + 1u);
    const uint lshift = (g >> 1) * 4u;
    const uint hshift = g * 2u;
    [[unroll]] for (uint i = 0u; i < 8u; ++i) {
        const uint lo = (w_u32(ql + 4u * i) >> lshift) & 0x0f0f0f0fu;
        const uint hi = ((w_u32(qh + 4u * i) >> hshift) & 0x03030303u) << 4;
        chunk_p[i] = sub_bytes(lo | hi, 32u);
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
