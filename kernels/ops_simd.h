// Vector primitives over f32 arrays that ops.cpp and attention.cpp build on (dot, axpy, exp,
// silu), with a portable version and ISA versions (kernels/cpu/x86/ops_avx2.cpp,
// kernels/cpu/arm/ops_neon.cpp). The variant in use follows the CPU dispatch's choice
// (cpu::active_isa(), so HEARTH_ISA caps it too); tests compare every variant with the portable one.
// Numerics: the ISA versions sum in a different order and use a polynomial exp (within 2 ulp of
// expf), so results differ from the portable ones by float rounding only.
// Thread-safety: immutable tables.
#pragma once

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
};

// The portable variant for isa::scalar and any ISA without its own; defined for every isa.
const f32_kernels & f32_kernels_for(cpu::isa i);
const f32_kernels & active_f32_kernels();

}  // namespace hearth::kernels::simd
