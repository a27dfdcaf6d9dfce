// AVX2 + FMA versions of the f32 vector primitives (kernels/ops_simd.h).
// exp: Cody-Waite range reduction x = k ln2 + r (ln2 split in two so r is exact to f32), a
// degree-6 polynomial for e^r on [-ln2/2, ln2/2] (the classic Cephes expf coefficients), and 2^k
// built in the exponent bits; within 2 ulp of expf. Inputs below -87.3365 (where expf would go
// subnormal) give 0; inputs above 88.7228 give +inf, as expf does.
#include <immintrin.h>

#include "kernels/ops_simd.h"

namespace hearth::kernels::simd {
namespace {

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline __m256 exp256(__m256 x) {
    const __m256 lo = _mm256_set1_ps(-87.33654f);
    const __m256 hi = _mm256_set1_ps(88.72283f);
    const __m256 underflow = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    const __m256 overflow = _mm256_cmp_ps(x, hi, _CMP_GT_OQ);
    x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
    const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    const __m256 r2 = _mm256_mul_ps(r, r);
    p = _mm256_fmadd_ps(p, r2, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    // 2^k for k in [-126, 128]: k = 128 (x near the top) is split as 2^127 * 2.
    const __m256i ki = _mm256_cvtps_epi32(k);
    const __m256i k_hi = _mm256_min_epi32(ki, _mm256_set1_epi32(127));
    const __m256 two_hi = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k_hi, _mm256_set1_epi32(127)), 23));
    const __m256 two_rest = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ki, k_hi), _mm256_set1_epi32(127)), 23));
    const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, two_hi), two_rest);
    return _mm256_blendv_ps(_mm256_andnot_ps(underflow, y), _mm256_set1_ps(__builtin_inff()), overflow);
}

inline float exp1(float x) {
    float out;
    const __m256 v = exp256(_mm256_set1_ps(x));
    _mm_store_ss(&out, _mm256_castps256_ps128(v));
    return out;
}

float dot_avx2(const float * a, const float * b, int64_t n) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
        acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), acc2);
        acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), acc3);
    }
    for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    float s = hsum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

void axpy_avx2(float a, const float * x, float * y, int64_t n) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; ++i) y[i] += a * x[i];
}

void scale_avx2(float * y, float s, int64_t n) {
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), vs));
    for (; i < n; ++i) y[i] *= s;
}

float exp_shifted_avx2(const float * x, float shift, float * y, int64_t n) {
    const __m256 vs = _mm256_set1_ps(shift);
    __m256 acc = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), vs));
        _mm256_storeu_ps(y + i, e);
        acc = _mm256_add_ps(acc, e);
    }
    float sum = hsum(acc);
    for (; i < n; ++i) {
        y[i] = exp1(x[i] - shift);
        sum += y[i];
    }
    return sum;
}

inline __m256 silu256(__m256 x) {
    const __m256 e = exp256(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

void silu_avx2(const float * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, silu256(_mm256_loadu_ps(x + i)));
    for (; i < n; ++i) y[i] = x[i] / (1.0f + exp1(-x[i]));
}

void swiglu_avx2(const float * gate, const float * up, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(silu256(_mm256_loadu_ps(gate + i)), _mm256_loadu_ps(up + i)));
    for (; i < n; ++i) y[i] = gate[i] / (1.0f + exp1(-gate[i])) * up[i];
}

// Four rows at a time: each 8-float slice of q is loaded once for four rows, and the four
// sums are reduced together.
void dot_rows_avx2(const float * q, const float * k, int64_t k_stride, int64_t n_rows, int64_t d, float scale,
                   float * out) {
    if (d % 8 != 0) {
        for (int64_t i = 0; i < n_rows; ++i) out[i] = dot_avx2(q, k + i * k_stride, d) * scale;
        return;
    }
    int64_t i = 0;
    for (; i + 4 <= n_rows; i += 4) {
        const float * k0 = k + i * k_stride;
        const float * k1 = k0 + k_stride;
        const float * k2 = k1 + k_stride;
        const float * k3 = k2 + k_stride;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
        for (int64_t j = 0; j < d; j += 8) {
            const __m256 qj = _mm256_loadu_ps(q + j);
            a0 = _mm256_fmadd_ps(qj, _mm256_loadu_ps(k0 + j), a0);
            a1 = _mm256_fmadd_ps(qj, _mm256_loadu_ps(k1 + j), a1);
            a2 = _mm256_fmadd_ps(qj, _mm256_loadu_ps(k2 + j), a2);
            a3 = _mm256_fmadd_ps(qj, _mm256_loadu_ps(k3 + j), a3);
        }
        // [a0 a1 a2 a3] -> four sums in one 128-bit register.
        const __m256 h01 = _mm256_hadd_ps(a0, a1);
        const __m256 h23 = _mm256_hadd_ps(a2, a3);
        const __m256 h = _mm256_hadd_ps(h01, h23);
        const __m128 sums = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
        _mm_storeu_ps(out + i, _mm_mul_ps(sums, _mm_set1_ps(scale)));
    }
    for (; i < n_rows; ++i) out[i] = dot_avx2(q, k + i * k_stride, d) * scale;
}

// The accumulator stays in registers, 32 floats at a time, while the rows stream past.
void weighted_sum_avx2(const float * p, const float * v, int64_t v_stride, int64_t n_rows, int64_t d, float * acc) {
    int64_t j = 0;
    for (; j + 32 <= d; j += 32) {
        __m256 a0 = _mm256_loadu_ps(acc + j), a1 = _mm256_loadu_ps(acc + j + 8);
        __m256 a2 = _mm256_loadu_ps(acc + j + 16), a3 = _mm256_loadu_ps(acc + j + 24);
        for (int64_t i = 0; i < n_rows; ++i) {
            const __m256 pi = _mm256_set1_ps(p[i]);
            const float * vi = v + i * v_stride + j;
            a0 = _mm256_fmadd_ps(pi, _mm256_loadu_ps(vi), a0);
            a1 = _mm256_fmadd_ps(pi, _mm256_loadu_ps(vi + 8), a1);
            a2 = _mm256_fmadd_ps(pi, _mm256_loadu_ps(vi + 16), a2);
            a3 = _mm256_fmadd_ps(pi, _mm256_loadu_ps(vi + 24), a3);
        }
        _mm256_storeu_ps(acc + j, a0);
        _mm256_storeu_ps(acc + j + 8, a1);
        _mm256_storeu_ps(acc + j + 16, a2);
        _mm256_storeu_ps(acc + j + 24, a3);
    }
    for (; j + 8 <= d; j += 8) {
        __m256 a0 = _mm256_loadu_ps(acc + j);
        for (int64_t i = 0; i < n_rows; ++i)
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(p[i]), _mm256_loadu_ps(v + i * v_stride + j), a0);
        _mm256_storeu_ps(acc + j, a0);
    }
    for (; j < d; ++j) {
        float a = acc[j];
        for (int64_t i = 0; i < n_rows; ++i) a += p[i] * v[i * v_stride + j];
        acc[j] = a;
    }
}

}  // namespace

const f32_kernels & f32_kernels_avx2() {
    static constexpr f32_kernels k{cpu::isa::avx2,  dot_avx2,  axpy_avx2,     scale_avx2,       exp_shifted_avx2,
                                   silu_avx2,       swiglu_avx2, dot_rows_avx2, weighted_sum_avx2};
    return k;
}

}  // namespace hearth::kernels::simd
