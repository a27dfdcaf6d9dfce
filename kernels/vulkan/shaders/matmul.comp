#version 450
// y[t][r] = sum_k w[r][k] * x[t][k]: one workgroup per (weight row, block of 8 tokens). The weight
// row is decoded once per chunk for all 8 tokens of the block (a matrix-vector product is the
// one-token case); each invocation takes every 64th chunk, and the workgroup sums the partials
// (subgroupAdd where HEARTH_SUBGROUP, shared memory otherwise). Activations stay f32.
#define WG_SIZE 64u
#define TOKENS 8u
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer weights_buf { uint w_words[]; };
layout(binding = 1, std430) readonly buffer x_buf { float x[]; };
layout(binding = 2, std430) writeonly buffer y_buf { float y[]; };
layout(push_constant) uniform params { uint n_rows; uint n_cols; uint row_bytes; uint n_tokens; uint groups_x; } p;

#include "common.glsl"
#include "dequant.glsl"

void main() {
    const uint r = gl_WorkGroupID.y * p.groups_x + gl_WorkGroupID.x;
    if (r >= p.n_rows) return;   // the whole workgroup, before any barrier
    const uint t0 = gl_WorkGroupID.z * TOKENS;
    const uint nt = min(TOKENS, p.n_tokens - t0);
    const uint n_chunks = p.n_cols / 32u;
    float acc[TOKENS];
    [[unroll]] for (uint t = 0u; t < TOKENS; ++t) acc[t] = 0.0;
    for (uint c = gl_LocalInvocationID.x; c < n_chunks; c += WG_SIZE) {
        load_chunk(r * p.row_bytes, c);
        for (uint t = 0u; t < nt; ++t) {
            const uint xb = (t0 + t) * p.n_cols + c * 32u;
            float s = 0.0;
            [[unroll]] for (uint j = 0u; j < 32u; ++j) s += chunk_vals[j] * x[xb + j];
            acc[t] += s;
        }
    }
#if HAS_TAIL
    // A plain type's row may end mid-chunk: its last n_cols % 32 elements, one per invocation.
    const uint i = n_chunks * 32u + gl_LocalInvocationID.x;
    if (i < p.n_cols) {
        const float wv = load_one(r * p.row_bytes, i);
        for (uint t = 0u; t < nt; ++t) acc[t] += wv * x[(t0 + t) * p.n_cols + i];
    }
#endif
    for (uint t = 0u; t < nt; ++t) {
        const float s = workgroup_sum(acc[t]);
        if (gl_LocalInvocationID.x == 0u) y[(t0 + t) * p.n_rows + r] = s;
    }
}
