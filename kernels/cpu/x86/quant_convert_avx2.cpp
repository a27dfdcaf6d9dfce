// AVX2 row conversions (quantize_row / dequantize_row) for the activation and KV-cache types.
// Every function here is bit-identical to the scalar reference, which the tests check. q8_0
// follows ggml's CPU quantizer (127 / amax, ties to even), as llama.cpp quantizes activations
// and its KV cache at run time; q8_1 keeps the reference rule (roundf), and F16C's NaN quieting
// falls back to the exact rules below.
#pragma GCC optimize("fp-contract=off")

#include <cmath>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/cpu/x86/avx2_util.h"
#include "kernels/cpu/x86/quant_avx2.h"
#include "kernels/fp16.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

inline __m256 abs_ps(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

// max |x| over 8 * k floats, ignoring NaNs as the scalar std::max(amax, fabs(x)) does.
inline float abs_max(const float * x, int count) {
    __m256 m = _mm256_setzero_ps();
    for (int j = 0; j < count; j += 8) m = _mm256_max_ps(abs_ps(_mm256_loadu_ps(x + j)), m);
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

// roundf (half away from zero), exactly: trunc, then one step away from zero where the
// dropped fraction is >= 0.5 (v - trunc(v) is exact).
inline __m256i round_away(__m256 v) {
    const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 frac = abs_ps(_mm256_sub_ps(v, t));
    const __m256 up = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    const __m256 step = _mm256_and_ps(up, _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(v, _mm256_set1_ps(-0.0f))));
    return _mm256_cvttps_epi32(_mm256_add_ps(t, step));
}

// 32 int32 (four registers) -> 32 int8 in order.
inline __m256i pack_i32_to_i8(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i ab = _mm256_packs_epi32(a, b);
    const __m256i cd = _mm256_packs_epi32(c, d);
    const __m256i abcd = _mm256_packs_epi16(ab, cd);
    // packs interleave the 128-bit lanes: restore element order.
    return _mm256_permutevar8x32_epi32(abcd, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

}  // namespace

void quantize_row_q8_0(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<block_q8_0 *>(dst);
    for (int64_t i = 0; i < n / k_qk8_0; ++i, src += k_qk8_0) {
        const float amax = abs_max(src, 32);
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[i].d = fp32_to_fp16(d);
        const __m256 vid = _mm256_set1_ps(id);
        __m256i q[4];
        for (int k = 0; k < 4; ++k)
            q[k] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(src + 8 * k), vid),
                                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(y[i].qs), pack_i32_to_i8(q[0], q[1], q[2], q[3]));
    }
}

void quantize_row_q8_1(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<block_q8_1 *>(dst);
    for (int64_t i = 0; i < n / k_qk8_1; ++i, src += k_qk8_1) {
        const float d = abs_max(src, 32) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        const __m256 vid = _mm256_set1_ps(id);
        __m256i q[4];
        for (int k = 0; k < 4; ++k) q[k] = round_away(_mm256_mul_ps(_mm256_loadu_ps(src + 8 * k), vid));
        const __m256i s = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(y[i].qs), pack_i32_to_i8(q[0], q[1], q[2], q[3]));
        y[i].d = fp32_to_fp16(d);
        y[i].s = fp32_to_fp16(static_cast<float>(_mm_cvtsi128_si32(s4)) * d);
    }
}

void quantize_row_q8_K(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<block_q8_K *>(dst);
    for (int64_t i = 0; i < n / k_qk_k; ++i, src += k_qk_k) {
        const float amax = abs_max(src, k_qk_k);
        if (!(amax > 0.0f)) {
            std::memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        int first = 0;   // the first element of largest magnitude, whose sign the scale takes
        while (std::fabs(src[first]) != amax) ++first;
        const float iscale = -127.0f / src[first];
        const __m256 vs = _mm256_set1_ps(iscale);
        const __m256i top = _mm256_set1_epi32(127);
        for (int j = 0; j < k_qk_k; j += 32) {
            __m256i q[4];
            for (int k = 0; k < 4; ++k) {
                // round half to even, as the reference's nearest_int (|v| <= 127 here)
                const __m256 v = _mm256_round_ps(_mm256_mul_ps(vs, _mm256_loadu_ps(src + j + 8 * k)),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                q[k] = _mm256_min_epi32(_mm256_cvtps_epi32(v), top);
            }
            const __m256i q8 = pack_i32_to_i8(q[0], q[1], q[2], q[3]);
            _mm256_storeu_si256(reinterpret_cast<__m256i *>(y[i].qs + j), q8);
            // sums of each 16 quants: widen to int16, pairwise add to int32, then fold.
            const __m256i lo = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(q8));
            const __m256i hi = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(q8, 1));
            const __m256i one = _mm256_set1_epi16(1);
            const __m256i slo = _mm256_madd_epi16(lo, one);   // 8 partial sums of elements 0..15
            const __m256i shi = _mm256_madd_epi16(hi, one);   // 8 partial sums of elements 16..31
            const __m256i h = _mm256_hadd_epi32(slo, shi);    // [lo0..3 | hi0..3] per 128-bit lane
            const __m256i h2 = _mm256_hadd_epi32(h, h);
            const __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(h2), _mm256_extracti128_si256(h2, 1));
            y[i].bsums[j / 16] = static_cast<int16_t>(_mm_cvtsi128_si32(sum));
            y[i].bsums[j / 16 + 1] = static_cast<int16_t>(_mm_extract_epi32(sum, 1));
        }
        y[i].d = 1.0f / iscale;
    }
}

void quantize_row_f16(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<uint16_t *>(dst);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(src + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
            for (int k = 0; k < 8; ++k) y[i + k] = fp32_to_fp16(src[i + k]);   // NaN payload rules
            continue;
        }
        _mm_storeu_si128(reinterpret_cast<__m128i *>(y + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; ++i) y[i] = fp32_to_fp16(src[i]);
}

void dequantize_row_f16(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const uint16_t *>(src);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x + i));
        const __m128i exp = _mm_and_si128(h, _mm_set1_epi16(0x7C00));
        if (_mm_movemask_epi8(_mm_cmpeq_epi16(exp, _mm_set1_epi16(0x7C00))) != 0) {
            for (int k = 0; k < 8; ++k) dst[i + k] = fp16_to_fp32(x[i + k]);   // Inf/NaN: keep payloads
            continue;
        }
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; ++i) dst[i] = fp16_to_fp32(x[i]);
}

void dequantize_row_q8_0(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q8_0 *>(src);
    for (int64_t i = 0; i < n / k_qk8_0; ++i, dst += k_qk8_0) {
        const __m256 d = _mm256_set1_ps(fp16_to_fp32(x[i].d));
        for (int k = 0; k < 4; ++k) {
            const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(x[i].qs + 8 * k));
            _mm256_storeu_ps(dst + 8 * k, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), d));
        }
    }
}

void dequantize_row_q4_0(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q4_0 *>(src);
    for (int64_t i = 0; i < n / k_qk4_0; ++i, dst += k_qk4_0) {
        const __m256 d = _mm256_set1_ps(fp16_to_fp32(x[i].d));
        const __m256i q = _mm256_sub_epi8(bytes_from_nibbles(x[i].qs), _mm256_set1_epi8(8));
        for (int k = 0; k < 4; ++k) {
            const __m128i part = k < 2 ? _mm256_castsi256_si128(q) : _mm256_extracti128_si256(q, 1);
            const __m128i q8 = (k % 2) == 0 ? part : _mm_srli_si128(part, 8);
            _mm256_storeu_ps(dst + 8 * k, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q8))));
        }
    }
}

}  // namespace hearth::kernels::cpu::avx2
