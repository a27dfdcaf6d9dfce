// Vector primitives over f32 arrays that ops.cpp and attention.cpp build on (dot, axpy, exp,
// silu), with a portable version and ISA versions (kernels/cpu/x86/ops_avx2.cpp,
// kernels/cpu/arm/ops_neon.cpp). The variant in use follows the CPU dispatch's choice
// (cpu::active_isa(), so HEARTH_ISA caps it too); tests compare every variant with the portable one.
// Numerics: the ISA versions of dot, axpy, exp_shifted, dot_rows and weighted_sum sum in a
// different order and use a polynomial exp (within 2 ulp of expf), so results differ from the
// portable ones by float rounding only. silu and swiglu use exp_ggml in every variant on x86
// (llama.cpp's SiLU to the bit); the llama.cpp-exact kernels below agree bit for bit.
// Thread-safety: immutable tables.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/dispatch.h"

namespace hearth::kernels::simd {

struct f32_kernels {
    cpu::isa variant;
    float (*dot)(const float * a, const float * b, int64_t n);
    void (*axpy)(float a, const float * x, float * y, int64_t n);     // y += a * x
    void (*scale)(float * y, float s, int64_t n);                     // y *= s
    // y = exp(x - shift), returning the f32 sum of y; x == y allowed. Arguments below
    // about -87.3 give 0 (no subnormals).
    float (*exp_shifted)(const float * x, float shift, float * y, int64_t n);
    void (*silu)(const float * x, float * y, int64_t n);                          // x / (1 + exp(-x))
    void (*swiglu)(const float * gate, const float * up, float * y, int64_t n);   // silu(gate) * up
    // out[i] = scale * (q . k[i]) for n_rows rows of k, each d floats, row i at k + i * k_stride.
    void (*dot_rows)(const float * q, const float * k, int64_t k_stride, int64_t n_rows, int64_t d, float scale,
                     float * out);
    // acc[0..d) += sum_i p[i] * v[i] over n_rows rows of v (row i at v + i * v_stride).
    void (*weighted_sum)(const float * p, const float * v, int64_t v_stride, int64_t n_rows, int64_t d, float * acc);

    // llama.cpp's CPU arithmetic, step for step, so that our activations equal its own bit for
    // bit (attention.cpp's f16 path). Every variant gives the same bits for any input.
    // y = exp_ggml(x - shift), returning the sum of y as ggml's soft_max takes it: the f32 sum
    // of each block of 16 (from x[0]; a last partial block padded with zeros) folded pairwise
    // 16 -> 8 -> 4 -> 2 -> 1, the block sums added in double in order. x == y allowed.
    double (*exp_sum16)(const float * x, float shift, float * y, int64_t n);
    // The f16 dot products of ggml's mul_mat keep n_lanes partial sums (16: tinyBLAS, as
    // llama.cpp multiplies a batch; 64: ggml_vec_dot_f16, as it multiplies one token): element
    // j of a sum goes into lane j % n_lanes by fma, in order; fold_lanes finishes it.
    // out[i] = q . k[i], k rows as in dot_rows. d % n_lanes == 0.
    void (*dot_lanes_rows)(const float * q, const float * k, int64_t k_stride, int64_t n_rows, int64_t d,
                           int n_lanes, float * out);
    // lanes[(i % n_lanes) * d + j] = fma(p[i], v[i][j], that) for rows i in order: the partial
    // sums of the dot products of p with each column of v. For n_sets weight vectors over the
    // same rows at once (the query heads of a KV head): set s takes p + s * p_stride and
    // lanes + s * lanes_stride, each set's sums as a call of its own would make them.
    void (*lane_axpy)(const float * p, int64_t p_stride, const float * v, int64_t v_stride, int64_t n_rows,
                      int64_t d, int n_lanes, float * lanes, int64_t lanes_stride, int64_t n_sets);
    // RoPE's rotation of the pairs (a[i], b[i]) by the angles with cos c[i] and sin s[i], as
    // ggml's FMA build contracts it: a = fma(a, c, -(b * s)), b = fma(a, s, b * c).
    void (*rotate_pairs)(float * a, float * b, const float * c, const float * s, int64_t n);
    // dst[i * d + j] = f16 element j of the row at src + i * src_stride bytes, for n_rows rows:
    // attention's f16 cache, a chunk of positions at a time. Exact for every value but NaNs,
    // which come out quiet (as F16C converts them; fp16_to_fp32 keeps a signalling NaN).
    void (*f16_rows_to_f32)(const void * src, size_t src_stride, int64_t n_rows, int64_t d, float * dst);
};

// exp(x) as ggml_v_expf computes it in an AVX-512 build (the golden llama.cpp's): a degree-5
// polynomial after x = n ln2 + b, scaled by 2^n with one rounding; |n| > 192 gives 0 or +inf.
// Within about 2 ulp of expf; values below about -87.3 come out subnormal, below -104 zero.
float exp_ggml(float x);
// The 16 floats of x folded pairwise (x[i] + x[i + 8], then + 4, + 2, + 1), as
// _mm512_reduce_add_ps does.
float fold16(const float * x);
// n_lanes (16 or 64) partial sums, lane l at x[l * stride], added up as ggml does: 64 lanes are
// four 16-float vectors v0..v3 taken as (v0 + v2) + (v1 + v3), then fold16.
float fold_lanes(const float * x, int n_lanes, int64_t stride);
// out[j] = fold_lanes(lanes + j, n_lanes, d) for j < d: the same sums, column by column.
// Overwrites lanes.
void fold_lane_rows(float * lanes, int n_lanes, int64_t d, float * out);

// Portable versions of the llama.cpp-exact kernels, for ISA tables without their own.
double exp_sum16_portable(const float * x, float shift, float * y, int64_t n);
void dot_lanes_rows_portable(const float * q, const float * k, int64_t k_stride, int64_t n_rows, int64_t d,
                             int n_lanes, float * out);
void lane_axpy_portable(const float * p, int64_t p_stride, const float * v, int64_t v_stride, int64_t n_rows,
                        int64_t d, int n_lanes, float * lanes, int64_t lanes_stride, int64_t n_sets);
void rotate_pairs_portable(float * a, float * b, const float * c, const float * s, int64_t n);
void f16_rows_to_f32_portable(const void * src, size_t src_stride, int64_t n_rows, int64_t d, float * dst);

// One pair of that rotation: ggml's x0*cos - x1*sin and x0*sin + x1*cos as its FMA build
// contracts them (the first product fused, the second rounded): llama.cpp's RoPE to the bit.
inline void rotate_pair(float & a, float & b, float c, float s) {
    const float x0 = a, x1 = b;
    a = std::fma(x0, c, -(x1 * s));
    b = std::fma(x0, s, x1 * c);
}

// The portable variant for isa::scalar and any ISA without its own; defined for every isa.
const f32_kernels & f32_kernels_for(cpu::isa i);
const f32_kernels & active_f32_kernels();

}  // namespace hearth::kernels::simd
