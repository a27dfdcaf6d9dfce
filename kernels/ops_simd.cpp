#include "kernels/ops_simd.h"

#include <cmath>

namespace hearth::kernels::simd {

#if defined(__x86_64__) || defined(_M_X64)
const f32_kernels & f32_kernels_avx2();   // kernels/cpu/x86/ops_avx2.cpp
#endif
#if defined(__aarch64__)
const f32_kernels & f32_kernels_neon();   // kernels/cpu/arm/ops_neon.cpp
#endif

namespace {

float dot_portable(const float * a, const float * b, int64_t n) {
    // Eight partial sums: the compiler turns them into vector lanes without reassociating.
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) acc[l] += a[i + l] * b[i + l];
    float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

void axpy_portable(float a, const float * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

void scale_portable(float * y, float s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

float exp_shifted_portable(const float * x, float shift, float * y, int64_t n) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        const float d = x[i] - shift;
        y[i] = d < -87.33654f ? 0.0f : std::exp(d);
        sum += y[i];
    }
    return sum;
}

void silu_portable(const float * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void swiglu_portable(const float * gate, const float * up, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void dot_rows_portable(const float * q, const float * k, int64_t k_stride, int64_t n_rows, int64_t d, float scale,
                       float * out) {
    for (int64_t i = 0; i < n_rows; ++i) out[i] = dot_portable(q, k + i * k_stride, d) * scale;
}

void weighted_sum_portable(const float * p, const float * v, int64_t v_stride, int64_t n_rows, int64_t d,
                           float * acc) {
    for (int64_t i = 0; i < n_rows; ++i) axpy_portable(p[i], v + i * v_stride, acc, d);
}

constexpr f32_kernels k_portable{cpu::isa::scalar,     dot_portable,         axpy_portable,
                                 scale_portable,       exp_shifted_portable, silu_portable,
                                 swiglu_portable,      dot_rows_portable,    weighted_sum_portable};

}  // namespace

const f32_kernels & f32_kernels_for(cpu::isa i) {
#if defined(__x86_64__) || defined(_M_X64)
    if (i == cpu::isa::avx2 || i == cpu::isa::avx512_vnni) return f32_kernels_avx2();
#endif
#if defined(__aarch64__)
    if (i == cpu::isa::neon || i == cpu::isa::neon_dotprod) return f32_kernels_neon();
#endif
    (void)i;
    return k_portable;
}

const f32_kernels & active_f32_kernels() {
    static const f32_kernels & active = f32_kernels_for(cpu::active_isa());
    return active;
}

}  // namespace hearth::kernels::simd
