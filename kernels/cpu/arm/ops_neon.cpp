// NEON (ARMv8) versions of the f32 vector primitives (kernels/ops_simd.h), the same algorithms
// as kernels/cpu/x86/ops_avx2.cpp on 4-lane vectors: exp by Cody-Waite reduction and the Cephes
// degree-6 polynomial (within 2 ulp of expf; below -87.3365 gives 0, above 88.7228 gives +inf).
#include <arm_neon.h>

#include <cmath>

#include "kernels/ops_simd.h"

namespace hearth::kernels::simd {
namespace {

inline float32x4_t exp128(float32x4_t x) {
    const float32x4_t lo = vdupq_n_f32(-87.33654f);
    const float32x4_t hi = vdupq_n_f32(88.72283f);
    const uint32x4_t underflow = vcltq_f32(x, lo);
    const uint32x4_t overflow = vcgtq_f32(x, hi);
    x = vminq_f32(vmaxq_f32(x, lo), hi);
    const float32x4_t k = vrndnq_f32(vmulq_n_f32(x, 1.44269504088896341f));
    float32x4_t r = vfmsq_f32(x, k, vdupq_n_f32(0.693359375f));
    r = vfmsq_f32(r, k, vdupq_n_f32(-2.12194440e-4f));
    float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
    p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
    p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
    p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
    const int32x4_t ki = vcvtq_s32_f32(k);
    const int32x4_t k_hi = vminq_s32(ki, vdupq_n_s32(127));
    const float32x4_t two_hi = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k_hi, vdupq_n_s32(127)), 23));
    const float32x4_t two_rest =
        vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vsubq_s32(ki, k_hi), vdupq_n_s32(127)), 23));
    float32x4_t y = vmulq_f32(vmulq_f32(p, two_hi), two_rest);
    y = vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(y), underflow));
    return vbslq_f32(overflow, vdupq_n_f32(INFINITY), y);
}

inline float exp1(float x) { return vgetq_lane_f32(exp128(vdupq_n_f32(x)), 0); }

float dot_neon(const float * a, const float * b, int64_t n) {
    float32x4_t acc0 = vdupq_n_f32(0), acc1 = vdupq_n_f32(0), acc2 = vdupq_n_f32(0), acc3 = vdupq_n_f32(0);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = vfmaq_f32(acc0, vld1q_f32(a + i), vld1q_f32(b + i));
        acc1 = vfmaq_f32(acc1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
        acc2 = vfmaq_f32(acc2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
        acc3 = vfmaq_f32(acc3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
    }
    for (; i + 4 <= n; i += 4) acc0 = vfmaq_f32(acc0, vld1q_f32(a + i), vld1q_f32(b + i));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(acc0, acc1), vaddq_f32(acc2, acc3)));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

void axpy_neon(float a, const float * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_n_f32(vld1q_f32(y + i), vld1q_f32(x + i), a));
    for (; i < n; ++i) y[i] += a * x[i];
}

void scale_neon(float * y, float s, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_n_f32(vld1q_f32(y + i), s));
    for (; i < n; ++i) y[i] *= s;
}

float exp_shifted_neon(const float * x, float shift, float * y, int64_t n) {
    const float32x4_t vs = vdupq_n_f32(shift);
    float32x4_t acc = vdupq_n_f32(0);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t e = exp128(vsubq_f32(vld1q_f32(x + i), vs));
        vst1q_f32(y + i, e);
        acc = vaddq_f32(acc, e);
    }
    float sum = vaddvq_f32(acc);
    for (; i < n; ++i) {
        y[i] = exp1(x[i] - shift);
        sum += y[i];
    }
    return sum;
}

inline float32x4_t silu128(float32x4_t x) {
    return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), exp128(vnegq_f32(x))));
}

void silu_neon(const float * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, silu128(vld1q_f32(x + i)));
    for (; i < n; ++i) y[i] = x[i] / (1.0f + exp1(-x[i]));
}

void swiglu_neon(const float * gate, const float * up, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_f32(silu128(vld1q_f32(gate + i)), vld1q_f32(up + i)));
    for (; i < n; ++i) y[i] = gate[i] / (1.0f + exp1(-gate[i])) * up[i];
}

// Four rows at a time, sharing each q load.
void dot_rows_neon(const float * q, const float * k, int64_t k_stride, int64_t n_rows, int64_t d, float scale,
                   float * out) {
    if (d % 4 != 0) {
        for (int64_t i = 0; i < n_rows; ++i) out[i] = dot_neon(q, k + i * k_stride, d) * scale;
        return;
    }
    int64_t i = 0;
    for (; i + 4 <= n_rows; i += 4) {
        const float * k0 = k + i * k_stride;
        const float * k1 = k0 + k_stride;
        const float * k2 = k1 + k_stride;
        const float * k3 = k2 + k_stride;
        float32x4_t a0 = vdupq_n_f32(0), a1 = vdupq_n_f32(0), a2 = vdupq_n_f32(0), a3 = vdupq_n_f32(0);
        for (int64_t j = 0; j < d; j += 4) {
            const float32x4_t qj = vld1q_f32(q + j);
            a0 = vfmaq_f32(a0, qj, vld1q_f32(k0 + j));
            a1 = vfmaq_f32(a1, qj, vld1q_f32(k1 + j));
            a2 = vfmaq_f32(a2, qj, vld1q_f32(k2 + j));
            a3 = vfmaq_f32(a3, qj, vld1q_f32(k3 + j));
        }
        const float32x4_t sums = vpaddq_f32(vpaddq_f32(a0, a1), vpaddq_f32(a2, a3));
        vst1q_f32(out + i, vmulq_n_f32(sums, scale));
    }
    for (; i < n_rows; ++i) out[i] = dot_neon(q, k + i * k_stride, d) * scale;
}

// The accumulator stays in registers, 16 floats at a time, while the rows stream past.
void weighted_sum_neon(const float * p, const float * v, int64_t v_stride, int64_t n_rows, int64_t d, float * acc) {
    int64_t j = 0;
    for (; j + 16 <= d; j += 16) {
        float32x4_t a0 = vld1q_f32(acc + j), a1 = vld1q_f32(acc + j + 4);
        float32x4_t a2 = vld1q_f32(acc + j + 8), a3 = vld1q_f32(acc + j + 12);
        for (int64_t i = 0; i < n_rows; ++i) {
            const float * vi = v + i * v_stride + j;
            a0 = vfmaq_n_f32(a0, vld1q_f32(vi), p[i]);
            a1 = vfmaq_n_f32(a1, vld1q_f32(vi + 4), p[i]);
            a2 = vfmaq_n_f32(a2, vld1q_f32(vi + 8), p[i]);
            a3 = vfmaq_n_f32(a3, vld1q_f32(vi + 12), p[i]);
        }
        vst1q_f32(acc + j, a0);
        vst1q_f32(acc + j + 4, a1);
        vst1q_f32(acc + j + 8, a2);
        vst1q_f32(acc + j + 12, a3);
    }
    for (; j < d; ++j) {
        float a = acc[j];
        for (int64_t i = 0; i < n_rows; ++i) a += p[i] * v[i * v_stride + j];
        acc[j] = a;
    }
}

}  // namespace

const f32_kernels & f32_kernels_neon() {
    static constexpr f32_kernels k{cpu::isa::neon,      dot_neon,           axpy_neon,
                                   scale_neon,          exp_shifted_neon,   silu_neon,
                                   swiglu_neon,         dot_rows_neon,      weighted_sum_neon,
                                   exp_sum16_portable,  dot_lanes_rows_portable, lane_axpy_portable,
                                   rotate_pairs_portable, f16_rows_to_f32_portable};
    return k;
}

}  // namespace hearth::kernels::simd
