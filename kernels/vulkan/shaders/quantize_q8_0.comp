#version 450
// Activations to q8_0 as the CPU quantizes them (kernels/cpu/generic quantize_row_q8_0): per block
// of 32, d = amax / 127 kept as the f16 the CPU stores, quants round(x * 127 / amax) ties to even.
// One invocation per block; out holds 9 words a block: d (f32 bits of the f16 value), 32 int8.
#define WG_SIZE 64u
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer x_buf { float x[]; };
layout(binding = 1, std430) writeonly buffer q_buf { uint xq[]; };
layout(push_constant) uniform params { uint n_blocks; } p;   // n_tokens * n_cols / 32

#include "common.glsl"

void main() {
    const uint blk = gl_WorkGroupID.y * gl_NumWorkGroups.x * 64u + gl_GlobalInvocationID.x;
    if (blk >= p.n_blocks) return;
    const uint xb = blk * 32u;
    float amax = 0.0;
    for (uint j = 0u; j < 32u; ++j) amax = max(amax, abs(x[xb + j]));
    // Divisions rounded as the CPU's (common.glsl div_rn), whatever the device's precision.
    const float d = amax != 0.0 ? div_rn(amax, 127.0) : 0.0;
    const float id = amax != 0.0 ? div_rn(127.0, amax) : 0.0;
    xq[blk * 9u] = floatBitsToUint(half_to_float(float_to_half(d)));
    for (uint j = 0u; j < 8u; ++j) {
        uint w = 0u;
        for (uint k = 0u; k < 4u; ++k) {
            precise float v = x[xb + 4u * j + k] * id;
            w |= (uint(int(roundEven(v))) & 0xffu) << (8u * k);
        }
        xq[blk * 9u + 1u + j] = w;
    }
}
