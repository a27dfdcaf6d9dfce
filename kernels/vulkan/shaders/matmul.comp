#version 450
// y[t][r] = sum_k w[r][k] * x[t][k]: one workgroup per (weight row, block of 8 tokens). The weight
// row is decoded once per chunk for all 8 tokens of the block (a matrix-vector product is the
// one-token case); each invocation takes every 64th chunk, and the workgroup sums the partials
// (subgroupAdd where HEARTH_SUBGROUP, shared memory otherwise).
// Activations as the CPU converts them (kernels/quant.h vec_dot_type): with HEARTH_ACT_Q8_0 (q8_0,
// q4_0, q5_0) they come quantized to q8_0 (quantize_q8_0.comp) and each block is an integer dot
// product times both scales; with HEARTH_ACT_Q8_K (q4_K, q6_K) quantized to q8_K
// (quantize_q8_k.comp) and each 32-element sub-block is the CPU's integer sums (q4_K's min through
// q8_K's bsums) times the CPU's scales (d_w * d_x, then times the sum), added in f32 per sub-block
// where the CPU adds per super-block or per SIMD lane. The integer sums take four int8 products
// at a time (int_dot.glsl: the device's integer dot product with HEARTH_INT_DOT, else scalar).
// f16 weights meet activations rounded to f16, their exact f32 products summed in double with
// HEARTH_F64 (the CPU's exact sum, so its result to the bit); f32 weights take them in f32.
// With HEARTH_EXPERTS (matmul_experts) the "tokens" are the picks (token, j), one a workgroup: pick
// q takes rows [e * n_rows, (e + 1) * n_rows) of the stacked weights, e = ids[q], and activation
// row q (x_per_pick) or q / n_used, so each product is matmul's of that sub-matrix, bit for bit.
#define WG_SIZE 64u
#if HEARTH_EXPERTS
#define TOKENS 1u
#else
#define TOKENS 8u
#endif
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer weights_buf { uint w_words[]; };
#if HEARTH_ACT_Q8_0
layout(binding = 1, std430) readonly buffer x_buf { uint xq[]; };   // 9 words a block: d, then 32 int8
#elif HEARTH_ACT_Q8_K
layout(binding = 1, std430) readonly buffer x_buf { uint xq[]; };   // block_q8_K: 73 words, d, 256 int8, 16 int16
#else
layout(binding = 1, std430) readonly buffer x_buf { float x[]; };
#endif
layout(binding = 2, std430) writeonly buffer y_buf { float y[]; };
#if HEARTH_EXPERTS
layout(binding = 3, std430) readonly buffer ids_buf { int ids[]; };   // [n_tokens] expert ids
layout(push_constant) uniform params {
    uint n_rows; uint n_cols; uint row_bytes; uint n_tokens; uint groups_x; uint n_used; uint x_per_pick;
} p;
// Weight row r of pick q's expert, and pick q's activation row.
uint w_row(uint r, uint q) { return (uint(ids[q]) * p.n_rows + r) * p.row_bytes; }
uint x_row(uint q) { return p.x_per_pick != 0u ? q : q / p.n_used; }
#else
layout(push_constant) uniform params { uint n_rows; uint n_cols; uint row_bytes; uint n_tokens; uint groups_x; } p;
uint w_row(uint r, uint t) { return r * p.row_bytes; }
uint x_row(uint t) { return t; }
#endif

#include "common.glsl"
#include "dequant.glsl"
#if HEARTH_ACT_Q8_0 || HEARTH_ACT_Q8_K
#include "int_dot.glsl"
#endif

void main() {
    const uint r = gl_WorkGroupID.y * p.groups_x + gl_WorkGroupID.x;
    if (r >= p.n_rows) return;   // the whole workgroup, before any barrier
    const uint t0 = gl_WorkGroupID.z * TOKENS;
    const uint nt = min(TOKENS, p.n_tokens - t0);
    const uint n_chunks = p.n_cols / 32u;
    const uint wr = w_row(r, t0);   // the same for the block's tokens (one pick with experts)
#if HEARTH_F64
    double acc[TOKENS];
#else
    float acc[TOKENS];
#endif
    [[unroll]] for (uint t = 0u; t < TOKENS; ++t) acc[t] = 0.0;
    for (uint c = gl_LocalInvocationID.x; c < n_chunks; c += WG_SIZE) {
#if HEARTH_ACT_Q8_0 || HEARTH_ACT_Q8_K
        load_chunk_packed(wr, c);
        for (uint t = 0u; t < nt; ++t) {
#if HEARTH_ACT_Q8_0
            const uint xb = (x_row(t0 + t) * n_chunks + c) * 9u;
#else
            const uint xs = (x_row(t0 + t) * (n_chunks >> 3) + (c >> 3)) * 73u;   // the q8_K block
            const uint xb = xs + 8u * (c & 7u);                                   // its sub-block, less 1
#endif
            int s_lo = 0, s_hi = 0;   // elements 0..15 and 16..31
            [[unroll]] for (uint i = 0u; i < 4u; ++i) {
                s_lo += dot4(chunk_p[i], xq[xb + 1u + i]);
                s_hi += dot4(chunk_p[i + 4u], xq[xb + 5u + i]);
            }
#if HEARTH_ACT_Q8_0
            precise float ds = chunk_d * uintBitsToFloat(xq[xb]);
            precise float term = float(s_lo + s_hi) * ds;
#elif HEARTH_W_Q4_K
            // The CPU's q4_K: sc * sum(q4 * q8) - m * (the sub-block's two bsums), d and dmin times q8_K's d.
            const uint bs = xq[xs + 65u + (c & 7u)];
            const int msum = chunk_m * ((int(bs << 16) >> 16) + (int(bs) >> 16));
            const float xd = uintBitsToFloat(xq[xs]);
            precise float dd = chunk_d * xd;
            precise float dm = chunk_dmin * xd;
            precise float term = dd * float(chunk_sc * (s_lo + s_hi)) - dm * float(msum);
#elif HEARTH_W_Q6_K
            precise float dd = chunk_d * uintBitsToFloat(xq[xs]);
            precise float term = dd * float(chunk_sc0 * s_lo + chunk_sc1 * s_hi);
#else
#error "q8_K activations are for q4_K and q6_K weights"
#endif
            acc[t] += term;
        }
#else
        load_chunk(wr, c);
        for (uint t = 0u; t < nt; ++t) {
            const uint xb = x_row(t0 + t) * p.n_cols + c * 32u;
#if HEARTH_F64
            double s = 0.0LF;
            [[unroll]] for (uint j = 0u; j < 32u; ++j) {
                precise float prod = chunk_vals[j] * half_to_float(float_to_half(x[xb + j]));
                s += double(prod);
            }
#elif HEARTH_W_F16
            // The CPU rounds the activations to f16; the f16 x f16 products are exact in f32.
            float s = 0.0;
            [[unroll]] for (uint j = 0u; j < 32u; ++j) s += chunk_vals[j] * half_to_float(float_to_half(x[xb + j]));
#else
            float s = 0.0;
            [[unroll]] for (uint j = 0u; j < 32u; ++j) s += chunk_vals[j] * x[xb + j];
#endif
            acc[t] += s;
        }
#endif
    }
#if HAS_TAIL
    // A plain type's row may end mid-chunk: its last n_cols % 32 elements, one per invocation.
    const uint i = n_chunks * 32u + gl_LocalInvocationID.x;
    if (i < p.n_cols) {
        const float wv = load_one(wr, i);
#if HEARTH_F64
        for (uint t = 0u; t < nt; ++t) {
            precise float prod = wv * half_to_float(float_to_half(x[x_row(t0 + t) * p.n_cols + i]));
            acc[t] += double(prod);
        }
#elif HEARTH_W_F16
        for (uint t = 0u; t < nt; ++t) acc[t] += wv * half_to_float(float_to_half(x[x_row(t0 + t) * p.n_cols + i]));
#else
        for (uint t = 0u; t < nt; ++t) acc[t] += wv * x[x_row(t0 + t) * p.n_cols + i];
#endif
    }
#endif
    for (uint t = 0u; t < nt; ++t) {
#if HEARTH_F64
        const float s = float(workgroup_sum_f64(acc[t]));
#else
        const float s = workgroup_sum(acc[t]);
#endif
        if (gl_LocalInvocationID.x == 0u) y[(t0 + t) * p.n_rows + r] = s;
    }
}
