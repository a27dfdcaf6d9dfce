// AVX2 + FMA versions of the f32 vector primitives (kernels/ops_simd.h).
// exp_ggml256, silu, swiglu and the llama.cpp-exact kernels give the portable versions' bits exactly (the
// same IEEE operations in the same order; fma where they call std::fma, and no contraction
// elsewhere: this file is built with fp-contract off).
// exp: Cody-Waite range reduction x = k ln2 + r (ln2 split in two so r is exact to f32), a
// degree-6 polynomial for e^r on [-ln2/2, ln2/2] (the classic Cephes expf coefficients), and 2^k
// built in the exponent bits; within 2 ulp of expf. Inputs below -87.3365 (where expf would go
// subnormal) give 0; inputs above 88.7228 give +inf, as expf does.
#pragma GCC optimize("fp-contract=off")

#include <immintrin.h>

#include <algorithm>
#include <cstddef>

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

// exp_ggml (ops_simd.h) on 8 floats, the same operations in the same order.
inline __m256 exp_ggml256(__m256 x) {
    const __m256 r = _mm256_set1_ps(0x1.8p23f);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), r);
    const __m256 n = _mm256_sub_ps(z, r);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                      _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 j = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
                        _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
        u, _mm256_fmadd_ps(_mm256_set1_ps(0x1.ffffecp-1f), b, _mm256_set1_ps(1.0f)));
    // j * 2^n rounded once: 2^n = 2^k1 * 2^k2 with j * 2^k1 exact.
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i above = _mm256_cmpgt_epi32(ni, _mm256_set1_epi32(127));
    const __m256i below = _mm256_cmpgt_epi32(_mm256_set1_epi32(-126), ni);
    const __m256i k2 = _mm256_or_si256(_mm256_and_si256(above, _mm256_sub_epi32(ni, _mm256_set1_epi32(127))),
                                       _mm256_and_si256(below, _mm256_set1_epi32(-100)));
    const auto pow2 = [](__m256i k) {
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
    };
    const __m256 res = _mm256_mul_ps(_mm256_mul_ps(j, pow2(_mm256_sub_epi32(ni, k2))), pow2(k2));
    const __m256 abs_n = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
    const __m256 out_of_range = _mm256_cmp_ps(abs_n, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
    if (_mm256_movemask_ps(out_of_range) == 0) return res;
    const __m256 alt = _mm256_andnot_ps(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ),
                                        _mm256_set1_ps(__builtin_inff()));
    return _mm256_blendv_ps(res, alt, out_of_range);
}

// fold16 (ops_simd.h) of the 16 floats lo, hi.
inline float fold16_256(__m256 lo, __m256 hi) {
    const __m256 a = _mm256_add_ps(lo, hi);
    const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
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

// ggml's SiLU: x / (1 + exp(0 - x)) with its exp, as silu_portable.
inline __m256 silu256(__m256 x) {
    const __m256 e = exp_ggml256(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

void silu_avx2(const float * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, silu256(_mm256_loadu_ps(x + i)));
    for (; i < n; ++i) y[i] = x[i] / (1.0f + exp_ggml(0.0f - x[i]));
}

void swiglu_avx2(const float * gate, const float * up, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(silu256(_mm256_loadu_ps(gate + i)), _mm256_loadu_ps(up + i)));
    for (; i < n; ++i) y[i] = gate[i] / (1.0f + exp_ggml(0.0f - gate[i])) * up[i];
}

double exp_sum16_avx2(const float * x, float shift, float * y, int64_t n) {
    const __m256 vs = _mm256_set1_ps(shift);
    double sum = 0.0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 lo = exp_ggml256(_mm256_sub_ps(_mm256_loadu_ps(x + i), vs));
        const __m256 hi = exp_ggml256(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vs));
        _mm256_storeu_ps(y + i, lo);
        _mm256_storeu_ps(y + i + 8, hi);
        sum += static_cast<double>(fold16_256(lo, hi));
    }
    if (i < n) {   // the last partial block, padded with zeros after its exps (scalar exps cost 0.6 % of a prefill)
        const int64_t m = n - i;
        alignas(32) float block[16];
        for (int64_t j = 0; j < 16; ++j) block[j] = j < m ? x[i + j] : shift;
        const __m256 lane = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256 mf = _mm256_set1_ps(static_cast<float>(m));
        const __m256 lo = _mm256_and_ps(exp_ggml256(_mm256_sub_ps(_mm256_load_ps(block), vs)), _mm256_cmp_ps(lane, mf, _CMP_LT_OQ));
        const __m256 hi = _mm256_and_ps(exp_ggml256(_mm256_sub_ps(_mm256_load_ps(block + 8), vs)),
                                        _mm256_cmp_ps(_mm256_add_ps(lane, _mm256_set1_ps(8.0f)), mf, _CMP_LT_OQ));
        _mm256_store_ps(block, lo);
        _mm256_store_ps(block + 8, hi);
        for (int64_t j = 0; j < m; ++j) y[i + j] = block[j];
        sum += static_cast<double>(fold16_256(lo, hi));
    }
    return sum;
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

// n_acc 8-float accumulators hold the n_lanes = 8 n_acc partial sums.
template <int n_acc>
void dot_lanes_rows_avx2_n(const float * q, const float * k, int64_t k_stride, int64_t n_rows, int64_t d,
                           float * out) {
    for (int64_t i = 0; i < n_rows; ++i) {
        const float * ki = k + i * k_stride;
        __m256 acc[n_acc];
        for (int a = 0; a < n_acc; ++a) acc[a] = _mm256_setzero_ps();
        for (int64_t j = 0; j < d; j += 8 * n_acc)
            for (int a = 0; a < n_acc; ++a)
                acc[a] = _mm256_fmadd_ps(_mm256_loadu_ps(q + j + 8 * a), _mm256_loadu_ps(ki + j + 8 * a), acc[a]);
        if constexpr (n_acc == 8) {   // (v0 + v2) + (v1 + v3) of the four 16-float vectors
            for (int a = 0; a < 2; ++a)
                acc[a] = _mm256_add_ps(_mm256_add_ps(acc[a], acc[a + 4]), _mm256_add_ps(acc[a + 2], acc[a + 6]));
        }
        out[i] = fold16_256(acc[0], acc[1]);
    }
}

// Four rows' 16 lanes (lo: lanes 0..7, hi: 8..15) folded as fold16 does, into out[0..4): each
// row's lanes go to 8 (lo + hi) and 4 (the 128-bit halves) in registers; a 4 x 4 transpose
// then puts lane k of the four rows in one register, so the last steps, (l0 + l2) + (l1 + l3),
// are four rows' at once.
inline void fold16_rows4(const __m256 lo[4], const __m256 hi[4], float * out) {
    __m128 h[4];
    for (int r = 0; r < 4; ++r) {
        const __m256 a = _mm256_add_ps(lo[r], hi[r]);
        h[r] = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    }
    _MM_TRANSPOSE4_PS(h[0], h[1], h[2], h[3]);   // h[k] = lane k of the four rows
    _mm_storeu_ps(out, _mm_add_ps(_mm_add_ps(h[0], h[2]), _mm_add_ps(h[1], h[3])));
}

// 16 lanes, four rows at a time, folded together (fold16_rows4). Each 16 floats of the query
// are loaded once for the four rows (once per row before: head_dim 128, 512 tokens after 4096
// positions, the scores were bound by the loads, two per fma).
void dot16_rows4_avx2(const float * q, const float * k, int64_t k_stride, int64_t n_rows, int64_t d, float * out) {
    int64_t i = 0;
    for (; i + 4 <= n_rows; i += 4) {
        __m256 lo[4], hi[4];
        for (int row = 0; row < 4; ++row) lo[row] = hi[row] = _mm256_setzero_ps();
        for (int64_t j = 0; j < d; j += 16) {
            const __m256 q_lo = _mm256_loadu_ps(q + j), q_hi = _mm256_loadu_ps(q + j + 8);
            for (int row = 0; row < 4; ++row) {
                const float * ki = k + (i + row) * k_stride + j;
                lo[row] = _mm256_fmadd_ps(q_lo, _mm256_loadu_ps(ki), lo[row]);
                hi[row] = _mm256_fmadd_ps(q_hi, _mm256_loadu_ps(ki + 8), hi[row]);
            }
        }
        fold16_rows4(lo, hi, out + i);
    }
    if (i < n_rows) dot_lanes_rows_avx2_n<2>(q, k + i * k_stride, k_stride, n_rows - i, d, out + i);
}

// 16 lanes with head_dim 64: the query in eight registers for the whole call, so each row's
// fmas take only its own loads (dot16_rows4 loads the query again for every row: attention
// prefill with an f16 cache, 512 tokens, 2 threads: 9.1 -> 8.0 ms). Four rows at a time, eight
// chains of fmas (two rows' four were bound by the fma latency: 7.3-7.5 -> 6.9-7.0 ms), folded
// together (fold16_rows4).
void dot16_d64_avx2(const float * q, const float * k, int64_t k_stride, int64_t n_rows, float * out) {
    __m256 qv[8];
    for (int c = 0; c < 8; ++c) qv[c] = _mm256_loadu_ps(q + 8 * c);
    int64_t i = 0;
    for (; i + 4 <= n_rows; i += 4) {
        __m256 lo[4], hi[4];
        for (int r = 0; r < 4; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
        for (int c = 0; c < 8; c += 2)
            for (int r = 0; r < 4; ++r) {
                const float * kr = k + (i + r) * k_stride + 8 * c;
                lo[r] = _mm256_fmadd_ps(qv[c], _mm256_loadu_ps(kr), lo[r]);
                hi[r] = _mm256_fmadd_ps(qv[c + 1], _mm256_loadu_ps(kr + 8), hi[r]);
            }
        fold16_rows4(lo, hi, out + i);
    }
    if (i < n_rows) dot_lanes_rows_avx2_n<2>(q, k + i * k_stride, k_stride, n_rows - i, 64, out + i);
}

// 64 lanes, four rows at a time: lane group a (8 floats) of a row sums q[64 c + 8 a ..] times
// its row over the 64-float pieces c in order. The groups are taken in the pairs the fold adds
// first, (0 + 4) + (2 + 6) and (1 + 5) + (3 + 7), so each row keeps two registers, and each
// piece of the query is loaded once for the four rows (once per row before: a decode step's
// scores were bound by the loads, two per fma).
void dot64_rows4_avx2(const float * q, const float * k, int64_t k_stride, int64_t n_rows, int64_t d, float * out) {
    int64_t i = 0;
    for (; i + 4 <= n_rows; i += 4) {
        const float * kr[4];
        for (int r = 0; r < 4; ++r) kr[r] = k + (i + r) * k_stride;
        // The lanes of group a of row r, summed over the pieces.
        const auto group = [&](int a, __m256 * lanes) {
            for (int r = 0; r < 4; ++r) lanes[r] = _mm256_setzero_ps();
            for (int64_t c = 0; c < d; c += 64) {
                const __m256 qa = _mm256_loadu_ps(q + c + 8 * a);
                for (int r = 0; r < 4; ++r) lanes[r] = _mm256_fmadd_ps(qa, _mm256_loadu_ps(kr[r] + c + 8 * a), lanes[r]);
            }
        };
        // Half h: (group h + group h + 4) + (group h + 2 + group h + 6).
        const auto half = [&](int h, __m256 * sum) {
            __m256 x[4], y[4];
            group(h, x);
            group(h + 4, y);
            for (int r = 0; r < 4; ++r) sum[r] = _mm256_add_ps(x[r], y[r]);
            group(h + 2, x);
            group(h + 6, y);
            for (int r = 0; r < 4; ++r) sum[r] = _mm256_add_ps(sum[r], _mm256_add_ps(x[r], y[r]));
        };
        __m256 lo[4], hi[4];
        half(0, lo);
        half(1, hi);
        fold16_rows4(lo, hi, out + i);
    }
    if (i < n_rows) dot_lanes_rows_avx2_n<8>(q, k + i * k_stride, k_stride, n_rows - i, d, out + i);
}

void dot_lanes_rows_avx2(const float * q, const float * k, int64_t k_stride, int64_t n_rows, int64_t d, int n_lanes,
                         float * out) {
    if (n_lanes == 64) dot64_rows4_avx2(q, k, k_stride, n_rows, d, out);
    else if (d == 64) dot16_d64_avx2(q, k, k_stride, n_rows, out);
    else dot16_rows4_avx2(q, k, k_stride, n_rows, d, out);
}

// A lane takes its rows in order (l, l + n_lanes, ...). Blocks of 4 * n_lanes rows: each 8
// columns of a lane stay in a register through the lane's four rows of the block, so a lane is
// loaded and stored once per four rows (once per row before: attention_prefill/f16, 512
// tokens, 2 threads 7.5-7.9 -> 7.2-7.4 ms); the rest row by row. The sets take a lane's four
// rows in turn, so those rows of v come from L1 for every set but the first (each set over the
// whole block read them from L2: the V half of a decode step's attention was bound by it).
void lane_axpy_avx2(const float * p, int64_t p_stride, const float * v, int64_t v_stride, int64_t n_rows, int64_t d,
                    int n_lanes, float * lanes, int64_t lanes_stride, int64_t n_sets) {
    if (d % 8 != 0) {
        lane_axpy_portable(p, p_stride, v, v_stride, n_rows, d, n_lanes, lanes, lanes_stride, n_sets);
        return;
    }
    constexpr int k_rows = 4;
    const int64_t block = k_rows * n_lanes;
    int64_t i0 = 0;
    for (; i0 + block <= n_rows; i0 += block)
        for (int64_t l = 0; l < n_lanes; ++l)
            for (int64_t s = 0; s < n_sets; ++s) {
                float * lane = lanes + s * lanes_stride + l * d;
                const float * ps = p + s * p_stride;
                __m256 pi[k_rows];
                for (int m = 0; m < k_rows; ++m) pi[m] = _mm256_set1_ps(ps[i0 + l + m * n_lanes]);
                for (int64_t j = 0; j < d; j += 8) {
                    __m256 acc = _mm256_loadu_ps(lane + j);
                    for (int m = 0; m < k_rows; ++m)
                        acc = _mm256_fmadd_ps(pi[m], _mm256_loadu_ps(v + (i0 + l + m * n_lanes) * v_stride + j), acc);
                    _mm256_storeu_ps(lane + j, acc);
                }
            }
    for (int64_t i = i0; i < n_rows; ++i) {
        const float * vi = v + i * v_stride;
        for (int64_t s = 0; s < n_sets; ++s) {
            float * lane = lanes + s * lanes_stride + (i % n_lanes) * d;
            const __m256 pi = _mm256_set1_ps(p[s * p_stride + i]);
            for (int64_t j = 0; j < d; j += 8)
                _mm256_storeu_ps(lane + j, _mm256_fmadd_ps(pi, _mm256_loadu_ps(vi + j), _mm256_loadu_ps(lane + j)));
        }
    }
}

void rotate_pairs_avx2(float * a, float * b, const float * c, const float * s, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x0 = _mm256_loadu_ps(a + i), x1 = _mm256_loadu_ps(b + i);
        const __m256 ci = _mm256_loadu_ps(c + i), si = _mm256_loadu_ps(s + i);
        const __m256 neg_x1s = _mm256_xor_ps(_mm256_mul_ps(x1, si), _mm256_set1_ps(-0.0f));
        _mm256_storeu_ps(a + i, _mm256_fmadd_ps(x0, ci, neg_x1s));
        _mm256_storeu_ps(b + i, _mm256_fmadd_ps(x0, si, _mm256_mul_ps(x1, ci)));
    }
    rotate_pairs_portable(a + i, b + i, c + i, s + i, n - i);
}

// F16C's conversion, 16 elements a step; the rows' tails as the portable version does them.
void f16_rows_to_f32_avx2(const void * src, size_t src_stride, int64_t n_rows, int64_t d, float * dst) {
    const int64_t d16 = d - d % 16;
    for (int64_t i = 0; i < n_rows; ++i) {
        const auto * row = reinterpret_cast<const uint16_t *>(static_cast<const std::byte *>(src) + i * src_stride);
        float * out = dst + i * d;
        for (int64_t j = 0; j < d16; j += 16) {
            _mm256_storeu_ps(out + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(row + j))));
            _mm256_storeu_ps(out + j + 8, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(row + j + 8))));
        }
        if (d16 < d) f16_rows_to_f32_portable(row + d16, 0, 1, d - d16, out + d16);
    }
}

}  // namespace

const f32_kernels & f32_kernels_avx2() {
    static constexpr f32_kernels k{cpu::isa::avx2,  dot_avx2,        axpy_avx2,      scale_avx2,
                                   exp_shifted_avx2, silu_avx2,      swiglu_avx2,    dot_rows_avx2,
                                   weighted_sum_avx2, exp_sum16_avx2, dot_lanes_rows_avx2, lane_axpy_avx2,
                                   rotate_pairs_avx2, f16_rows_to_f32_avx2};
    return k;
}

}  // namespace hearth::kernels::simd
