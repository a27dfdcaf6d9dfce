// The q6_K prefill tile with one int32 lane per 16-element sub-block, as quant_q4_K_sublanes.h
// does for q4_K: each half of a super-block (eight sub-blocks) is rearranged so that register s,
// lane m holds quants [4s, 4s + 4) of sub-block m, the weights once per row and the q8_K
// activations once per call in groups of eight tokens laid out as one sequential stream; four
// vpdpbusd per half leave each sub-block's sum in its lane, one vpmulld per half applies the
// scales, and the -32 offset comes off as before (-32 * the scales times the bsums). The block's
// integer sum is exact whatever the order, and the f32 steps are q6_K_tile's batch steps
// (quant_ktiles.h), so the results are bit-identical to it (tested).
// For AVX-512 VNNI's 32 registers. Internal linkage (anonymous namespace), as quant_ktiles.h.
// Thread-safety: pure functions, plus the thread_local scratch of sublane_tiles.
#pragma once

#include "kernels/cpu/x86/quant_sublanes.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

// Four registers holding elements [32k, 32k + 32) of a half (k = 0..3; int32 lanes 0-3: sub-block
// 2k, lanes 4-7: sub-block 2k + 1) -> q[s] lane m = sub-block m's four elements [4s, 4s + 4).
inline void half_to_sublanes(const __m256i in[4], __m256i q[4]) {
    // [sub-block 0 | 4], [1 | 5], [2 | 6], [3 | 7]
    const __m256i s04 = _mm256_permute2x128_si256(in[0], in[2], 0x20);
    const __m256i s15 = _mm256_permute2x128_si256(in[0], in[2], 0x31);
    const __m256i s26 = _mm256_permute2x128_si256(in[1], in[3], 0x20);
    const __m256i s37 = _mm256_permute2x128_si256(in[1], in[3], 0x31);
    const __m256i a_lo = _mm256_unpacklo_epi32(s04, s15), a_hi = _mm256_unpackhi_epi32(s04, s15);
    const __m256i b_lo = _mm256_unpacklo_epi32(s26, s37), b_hi = _mm256_unpackhi_epi32(s26, s37);
    q[0] = _mm256_unpacklo_epi64(a_lo, b_lo);
    q[1] = _mm256_unpackhi_epi64(a_lo, b_lo);
    q[2] = _mm256_unpacklo_epi64(a_hi, b_hi);
    q[3] = _mm256_unpackhi_epi64(a_hi, b_hi);
}

// A q6_K super-block by sub-block lanes: q[4 j + s] for half j; scales[j] int32 lane m holds
// sub-block 8 j + m's scale; all_scales the 16 scales as 16-bit lanes (for the offset).
struct q6_K_sublanes {
    __m256i q[8];
    __m256i scales[2];
    __m256i all_scales;
    float d;

    q6_K_sublanes() = default;
    explicit q6_K_sublanes(const block_q6_K & x) : all_scales(q6_K_all_scales(x)), d(fp16(x.d)) {
        for (int j = 0; j < 2; ++j) half_to_sublanes(q6_K_half(x, all_scales, j).q, q + 4 * j);
        const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x.scales));
        scales[0] = _mm256_cvtepi8_epi32(sc);
        scales[1] = _mm256_cvtepi8_epi32(_mm_unpackhi_epi64(sc, sc));
    }
};

// A q8_K super-block's quants by the lanes of q6_K_sublanes::q.
inline void by_16_element_sub_blocks(const int8_t * qs, __m256i q[8]) {
    for (int j = 0; j < 2; ++j) {
        __m256i in[4];
        for (int k = 0; k < 4; ++k) in[k] = load256(qs + 128 * j + 32 * k);
        half_to_sublanes(in, q + 4 * j);
    }
}
using q8_K_sublanes16 = q8_K_lanes<by_16_element_sub_blocks>;

// The tile of sublane_tiles<block_q6_K, q6_K_sublanes, q8_K_sublanes16, q6_K_by_sublanes> (quant_sublanes.h).
struct q6_K_by_sublanes {
    // T <= 8 tokens in groups of four (lanes past T repeat the group's first token and are
    // dropped); ys: block i of token t at ys[8 * i + t].
    template <int T>
    static void tile(int64_t nb, const q6_K_sublanes * x, const q8_K_sublanes16 * ys, float * out, int64_t out_stride) {
        constexpr int G = (T + 3) / 4;
        __m128 acc[G];
        for (int g = 0; g < G; ++g) acc[g] = _mm_setzero_ps();
        for (int64_t i = 0; i < nb; ++i) {
            const q6_K_sublanes & w = x[i];
            for (int g = 0; g < G; ++g) {
                const q8_K_sublanes16 * y[4];
                for (int k = 0; k < 4; ++k) y[k] = ys + 8 * i + (4 * g + k < T ? 4 * g + k : 4 * g);
                __m256i isum[4];
                for (int k = 0; k < 4; ++k) {
                    __m256i half[2];
                    for (int j = 0; j < 2; ++j) {   // integers: any order
                        __m256i c = _mm256_dpbusd_epi32(_mm256_setzero_si256(), w.q[4 * j], y[k]->q[4 * j]);
                        for (int s = 1; s < 4; ++s) c = _mm256_dpbusd_epi32(c, w.q[4 * j + s], y[k]->q[4 * j + s]);
                        half[j] = _mm256_mullo_epi32(c, w.scales[j]);
                    }
                    // The -32 offset of every quant: -32 * sum_s scale_s * bsum_s.
                    const __m256i offs = _mm256_slli_epi32(_mm256_madd_epi16(w.all_scales, y[k]->bsums), 5);
                    isum[k] = _mm256_sub_epi32(_mm256_add_epi32(half[0], half[1]), offs);
                }
                // acc = fma(float(sum) * d, d_a, acc), each token in its lane.
                const __m128 sums = _mm_cvtepi32_ps(hsum4_i32(isum[0], isum[1], isum[2], isum[3]));
                const __m128 d_a = _mm_setr_ps(y[0]->d, y[1]->d, y[2]->d, y[3]->d);
                acc[g] = _mm_fmadd_ps(_mm_mul_ps(sums, _mm_set1_ps(w.d)), d_a, acc[g]);
            }
        }
        alignas(16) float r[4 * G];
        for (int g = 0; g < G; ++g) _mm_store_ps(r + 4 * g, acc[g]);
        for (int t = 0; t < T; ++t) out[t * out_stride] = r[t];
    }
};

}  // namespace
}  // namespace hearth::kernels::cpu::avx2
