#version 450
// Writes a batch's K (or V) rows into a cache at positions first_pos.. in the cache's type, each
// value as kernels::quantize_row rounds it, so the device's rows are the CPU's bytes:
//   HEARTH_KV_F16:  one invocation per two elements (one 32-bit word), rounded as kernels/fp16.h;
//   HEARTH_KV_Q8_0: one invocation per two blocks of 32 (68 bytes, 17 words), as
//                   quantize_row_q8_0: d = amax / 127 kept in f16, quants round(x * 127 / amax)
//                   ties to even;
//   HEARTH_KV_Q4_0: one invocation per two blocks (36 bytes, 9 words), as quantize_row_q4_0:
//                   d = (the value of largest magnitude) / -8, quants min(15, int(x / d + 8.5)).
// A quantized row is an even number of blocks (ops.h supports_cache), so every pair of blocks
// starts on a word and the invocations never share one.
#define WG_SIZE 64u
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer src_buf { float src[]; };
layout(binding = 1, std430) buffer cache_buf { uint cache[]; };
layout(push_constant) uniform params { uint n_tokens; uint n_embd_kv; uint first_pos; } p;

#include "common.glsl"

#if HEARTH_KV_F16
void main() {
    const uint i = gl_GlobalInvocationID.x;
    const uint t = gl_WorkGroupID.y;
    const uint half_row = p.n_embd_kv / 2u;
    if (i >= half_row) return;
    const uint s = t * p.n_embd_kv + 2u * i;
    cache[(p.first_pos + t) * half_row + i] = float_to_half(src[s]) | (float_to_half(src[s + 1u]) << 16);
}
#else
#if HEARTH_KV_Q8_0
#define BLOCK_BYTES 34u
#define PAIR_WORDS 17u
#elif HEARTH_KV_Q4_0
#define BLOCK_BYTES 18u
#define PAIR_WORDS 9u
#else
#error "one HEARTH_KV_<TYPE> must be defined"
#endif

uint words[PAIR_WORDS];
void put_u8(uint off, uint v) { words[off >> 2] |= (v & 0xffu) << ((off & 3u) << 3); }
void put_u16(uint off, uint v) { put_u8(off, v); put_u8(off + 1u, v >> 8); }

// The block of 32 values at src[x..] into words at byte offset off.
void quantize_block(uint x, uint off) {
#if HEARTH_KV_Q8_0
    float amax = 0.0;
    for (uint j = 0u; j < 32u; ++j) amax = max(amax, abs(src[x + j]));
    precise float d = amax / 127.0;
    precise float id = amax != 0.0 ? 127.0 / amax : 0.0;
    put_u16(off, float_to_half(d));
    for (uint j = 0u; j < 32u; ++j) {
        precise float v = src[x + j] * id;
        put_u8(off + 2u + j, uint(int(roundEven(v))));
    }
#else
    float amax = 0.0;
    float mx = src[x];
    for (uint j = 0u; j < 32u; ++j) {
        if (amax < abs(src[x + j])) {
            amax = abs(src[x + j]);
            mx = src[x + j];
        }
    }
    precise float d = mx / -8.0;
    precise float id = d != 0.0 ? 1.0 / d : 0.0;
    put_u16(off, float_to_half(d));
    for (uint j = 0u; j < 16u; ++j) {
        precise float x0 = src[x + j] * id;
        precise float x1 = src[x + j + 16u] * id;
        precise float y0 = x0 + 8.5;
        precise float y1 = x1 + 8.5;
        const uint q0 = uint(min(15, int(y0)));
        const uint q1 = uint(min(15, int(y1)));
        put_u8(off + 2u + j, q0 | (q1 << 4));
    }
#endif
}

void main() {
    const uint pair = gl_GlobalInvocationID.x;
    const uint t = gl_WorkGroupID.y;
    const uint n_pairs = p.n_embd_kv / 64u;
    if (pair >= n_pairs) return;
    for (uint w = 0u; w < PAIR_WORDS; ++w) words[w] = 0u;
    const uint x = t * p.n_embd_kv + pair * 64u;
    quantize_block(x, 0u);
    quantize_block(x + 32u, BLOCK_BYTES);
    const uint base = (p.first_pos + t) * n_pairs * PAIR_WORDS + pair * PAIR_WORDS;
    for (uint w = 0u; w < PAIR_WORDS; ++w) cache[base + w] = words[w];
}
#endif
