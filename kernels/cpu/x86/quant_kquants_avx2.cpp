// AVX2 dot products of the 256-element super-block types (q2_K, q3_K, q5_K, iq4_xs) with q8_K
// (q4_K and q6_K, the common ones, have tile kernels in quant_ktiles.h).
// Each super-block's sums are exact int32 (maddubs products of at most 63 * 127 * 2 fit int16;
// scales are applied with madd); one FMA per super-block scales them by d_w * d_a into 8 f32 lanes.
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/cpu/x86/avx2_util.h"
#include "kernels/cpu/x86/kquant_util.h"
#include "kernels/cpu/x86/quant_avx2.h"

namespace hearth::kernels::cpu::avx2 {

float vec_dot_q2_K(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q2_K *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    const __m256i m3 = _mm256_set1_epi8(3);
    const __m128i m4 = _mm_set1_epi8(0x0F);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const float d = y[i].d * fp16(x[i].d);
        const float dmin = -y[i].d * fp16(x[i].dmin);
        const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x[i].scales));
        const __m128i scales8 = _mm_and_si128(packed, m4);
        const __m128i mins8 = _mm_and_si128(_mm_srli_epi16(packed, 4), m4);
        const __m256i prod_mins = _mm256_madd_epi16(_mm256_cvtepi8_epi16(mins8), load256(y[i].bsums));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(prod_mins), acc);
        const __m256i all_scales = _mm256_cvtepi8_epi16(scales8);
        const __m256i scales[2] = {_mm256_permute2x128_si256(all_scales, all_scales, 0x00),
                                   _mm256_permute2x128_si256(all_scales, all_scales, 0x11)};
        const uint8_t * q2 = x[i].qs;
        const int8_t * q8 = y[i].qs;
        __m256i sumi = _mm256_setzero_si256();
        for (int j = 0; j < 2; ++j, q2 += 32, q8 += 128) {
            const __m256i bits = load256(q2);
            for (int k = 0; k < 4; ++k) {
                const __m256i q = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * k), m3);
                const __m256i p = _mm256_maddubs_epi16(q, load256(q8 + 32 * k));
                sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(pair_i16(scales[j], k), p));
            }
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return hsum(acc);
}

float vec_dot_q3_K(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q3_K *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    const __m256i m3 = _mm256_set1_epi8(3);
    const __m256i mone = _mm256_set1_epi8(1);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const float d = y[i].d * fp16(x[i].d);
        uint32_t u[3];
        std::memcpy(u, x[i].scales, 12);
        constexpr uint32_t m4 = 0x0f0f0f0f, m2 = 0x03030303;
        __m128i scales128 = _mm_set_epi32(static_cast<int>(((u[1] >> 4) & m4) | (((u[2] >> 6) & m2) << 4)),
                                          static_cast<int>(((u[0] >> 4) & m4) | (((u[2] >> 4) & m2) << 4)),
                                          static_cast<int>((u[1] & m4) | (((u[2] >> 2) & m2) << 4)),
                                          static_cast<int>((u[0] & m4) | (((u[2] >> 0) & m2) << 4)));
        scales128 = _mm_sub_epi8(scales128, _mm_set1_epi8(32));
        const __m256i all_scales = _mm256_cvtepi8_epi16(scales128);
        const __m256i scales[2] = {_mm256_permute2x128_si256(all_scales, all_scales, 0x00),
                                   _mm256_permute2x128_si256(all_scales, all_scales, 0x11)};
        const __m256i hbits = load256(x[i].hmask);
        const uint8_t * q3 = x[i].qs;
        const int8_t * q8 = y[i].qs;
        __m256i sumi = _mm256_setzero_si256();
        int bit = 0;
        for (int j = 0; j < 2; ++j, q3 += 32, q8 += 128) {
            const __m256i bits = load256(q3);
            for (int k = 0; k < 4; ++k, ++bit) {
                const __m256i ql = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * k), m3);
                // 4 where the high bit is clear: q = ql - 4 * (1 - hbit).
                const __m256i missing = _mm256_andnot_si256(hbits, _mm256_slli_epi16(mone, bit));
                const __m256i qh = _mm256_slli_epi16(_mm256_srli_epi16(missing, bit), 2);
                const __m256i q8v = load256(q8 + 32 * k);
                const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(ql, q8v), _mm256_maddubs_epi16(qh, q8v));
                sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(pair_i16(scales[j], k), p));
            }
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return hsum(acc);
}

float vec_dot_q5_K(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q5_K *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i mone = _mm256_set1_epi8(1);
    __m256 acc = _mm256_setzero_ps();
    __m128 acc_m = _mm_setzero_ps();
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const float d = y[i].d * fp16(x[i].d);
        const float dmin = -y[i].d * fp16(x[i].dmin);
        const __m256i mins_and_scales = _mm256_cvtepu8_epi16(k4_scales_mins(x[i].scales));
        const __m256i bsums = load256(y[i].bsums);
        const __m128i q8s = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
        const __m128i prod = _mm_madd_epi16(_mm256_extracti128_si256(mins_and_scales, 1), q8s);
        acc_m = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(prod), acc_m);
        const __m128i sc128 = _mm256_castsi256_si128(mins_and_scales);
        const __m256i scales = _mm256_set_m128i(sc128, sc128);
        const __m256i hbits = load256(x[i].qh);
        const uint8_t * q5 = x[i].qs;
        const int8_t * q8 = y[i].qs;
        __m256i sumi = _mm256_setzero_si256();
        int bit = 0;
        for (int j = 0; j < 4; ++j, q5 += 32, q8 += 64) {
            const __m256i bits = load256(q5);
            const __m256i h0 = _mm256_and_si256(hbits, _mm256_slli_epi16(mone, bit));
            const __m256i lo = _mm256_add_epi8(_mm256_and_si256(bits, m4), _mm256_slli_epi16(_mm256_srli_epi16(h0, bit), 4));
            ++bit;
            const __m256i h1 = _mm256_and_si256(hbits, _mm256_slli_epi16(mone, bit));
            const __m256i hi = _mm256_add_epi8(_mm256_and_si256(_mm256_srli_epi16(bits, 4), m4),
                                               _mm256_slli_epi16(_mm256_srli_epi16(h1, bit), 4));
            ++bit;
            const __m256i pl = _mm256_madd_epi16(broadcast_i16(scales, 2 * j), _mm256_maddubs_epi16(lo, load256(q8)));
            const __m256i ph = _mm256_madd_epi16(broadcast_i16(scales, 2 * j + 1), _mm256_maddubs_epi16(hi, load256(q8 + 32)));
            sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(pl, ph));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    acc_m = _mm_add_ps(acc_m, _mm_movehl_ps(acc_m, acc_m));
    acc_m = _mm_add_ss(acc_m, _mm_movehdup_ps(acc_m));
    return hsum(acc) + _mm_cvtss_f32(acc_m);
}

float vec_dot_iq4_xs(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_iq4_xs *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    const __m256i values = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(k_iq4nl_values)));
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const uint8_t * qs = x[i].qs;
        const int8_t * q8 = y[i].qs;
        uint32_t sh = x[i].scales_h;
        __m256i sumi = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ib += 2, qs += 32, q8 += 64) {
            const __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(qs));
            const __m128i b2 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(qs + 16));
            const __m256i n1 = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b1, 4), b1), m4);
            const __m256i n2 = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b2, 4), b2), m4);
            const __m256i v1 = _mm256_shuffle_epi8(values, n1);
            const __m256i v2 = _mm256_shuffle_epi8(values, n2);
            const int ls1 = static_cast<int>((x[i].scales_l[ib / 2] & 0x0F) | ((sh << 4) & 0x30)) - 32;
            const int ls2 = static_cast<int>((x[i].scales_l[ib / 2] >> 4) | ((sh << 2) & 0x30)) - 32;
            sh >>= 4;
            const __m256i p1 = _mm256_maddubs_epi16(_mm256_sign_epi8(v1, v1), _mm256_sign_epi8(load256(q8), v1));
            const __m256i p2 = _mm256_maddubs_epi16(_mm256_sign_epi8(v2, v2), _mm256_sign_epi8(load256(q8 + 32), v2));
            sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p1, _mm256_set1_epi16(static_cast<int16_t>(ls1))));
            sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p2, _mm256_set1_epi16(static_cast<int16_t>(ls2))));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i].d) * y[i].d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return hsum(acc);
}

}  // namespace hearth::kernels::cpu::avx2
