#version 450
// Writes a batch's K (or V) rows into an f16 cache at positions first_pos.. : one invocation per
// two elements (one 32-bit word of the cache), rounded to f16 as kernels/fp16.h rounds.
#define WG_SIZE 64u
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer src_buf { float src[]; };
layout(binding = 1, std430) buffer cache_buf { uint cache[]; };
layout(push_constant) uniform params { uint n_tokens; uint n_embd_kv; uint first_pos; } p;

#include "common.glsl"

void main() {
    const uint i = gl_GlobalInvocationID.x;
    const uint t = gl_WorkGroupID.y;
    const uint half_row = p.n_embd_kv / 2u;
    if (i >= half_row) return;
    const uint s = t * p.n_embd_kv + 2u * i;
    cache[(p.first_pos + t) * half_row + i] = float_to_half(src[s]) | (float_to_half(src[s + 1u]) << 16);
}
