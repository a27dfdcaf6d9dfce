#version 450
// Activations to q8_K as the CPU quantizes them (kernels/cpu/generic quantize_row_q8_K): per block
// of 256, the element of largest magnitude (the first on ties) maps to -127, iscale = -127 / max,
// quants min(127, round_half_even(iscale * x)), d = 1 / iscale, bsums the sums of each 16 quants;
// an all-zero block is all zero. The bytes are the CPU's block_q8_K: 73 words a block, d (f32),
// 64 words of int8 quants, 8 words of int16 bsums. A workgroup per block, 4 elements an invocation.
#define WG_SIZE 64u
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer x_buf { float x[]; };
layout(binding = 1, std430) writeonly buffer q_buf { uint xq[]; };
layout(push_constant) uniform params { uint n_blocks; } p;   // n_tokens * n_cols / 256

#include "common.glsl"

shared float s_amax[WG_SIZE];
shared uint s_first[WG_SIZE];   // the index of the first element of that magnitude
shared int s_sum[WG_SIZE];      // each invocation's 4 quants summed

void main() {
    const uint blk = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (blk >= p.n_blocks) return;   // the whole workgroup
    const uint l = gl_LocalInvocationID.x;
    const uint xb = blk * 256u;
    const uint out_b = blk * 73u;
    float v[4];
    float amax = 0.0;
    uint first = 0u;
    [[unroll]] for (uint k = 0u; k < 4u; ++k) {
        v[k] = x[xb + 4u * l + k];
        if (abs(v[k]) > amax) {   // as the CPU's scan: a later element only if strictly larger (NaN never)
            amax = abs(v[k]);
            first = 4u * l + k;
        }
    }
    s_amax[l] = amax;
    s_first[l] = first;
    barrier();
    // Each step's right half holds later elements than its left: it wins only when larger.
    [[unroll]] for (uint step = WG_SIZE / 2u; step > 0u; step >>= 1) {
        if (l < step && s_amax[l + step] > s_amax[l]) {
            s_amax[l] = s_amax[l + step];
            s_first[l] = s_first[l + step];
        }
        barrier();
    }
    if (s_amax[0] == 0.0) {   // the same for every invocation
        xq[out_b + 1u + l] = 0u;
        if (l == 0u) xq[out_b] = 0u;
        if (l < 8u) xq[out_b + 65u + l] = 0u;
        return;
    }
    const float iscale = div_rn(-127.0, x[xb + s_first[0]]);
    uint packed = 0u;
    int sum = 0;
    [[unroll]] for (uint k = 0u; k < 4u; ++k) {
        precise float s = iscale * v[k];
        const int q = min(127, int(roundEven(s)));
        packed |= (uint(q) & 0xffu) << (8u * k);
        sum += q;
    }
    xq[out_b + 1u + l] = packed;
    s_sum[l] = sum;
    barrier();
    if (l < 8u) {   // bsums 2l and 2l + 1: invocations 8l .. 8l + 3 and 8l + 4 .. 8l + 7
        const int lo = s_sum[8u * l] + s_sum[8u * l + 1u] + s_sum[8u * l + 2u] + s_sum[8u * l + 3u];
        const int hi = s_sum[8u * l + 4u] + s_sum[8u * l + 5u] + s_sum[8u * l + 6u] + s_sum[8u * l + 7u];
        xq[out_b + 65u + l] = (uint(lo) & 0xffffu) | (uint(hi) << 16);
    }
    if (l == 0u) xq[out_b] = floatBitsToUint(div_rn(1.0, iscale));
}
