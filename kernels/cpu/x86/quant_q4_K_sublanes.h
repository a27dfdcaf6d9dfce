// The q4_K prefill tile with one int32 lane per sub-block: each super-block's eight 32-element
// sub-blocks are transposed across the lanes (register s, lane k: quants [4s, 4s + 4) of
// sub-block k), the weights once per row and the q8_K activations once per call, so the eight
// vpdpbusd of a token leave sub-block k's exact sum in lane k, one vpmulld applies the scales,
// and the batch order's pair sums I_j = lanes 2j + 2j + 1 of four tokens come out of one
// transpose-and-add (12 instructions for 16 sums, where reducing each pair's eight lanes took
// 44). The mins go
// the same way (lane k: min_k times sub-block k's bsum). Same integers and the same f32 steps as
// q4_K_batch_tile (quant_ktiles.h: llama.cpp's batch order), so bit-identical to it (tested).
// For AVX-512 VNNI's 32 registers (the eight weight registers stay live through four tokens).
// Internal linkage (anonymous namespace), as quant_ktiles.h.
// Thread-safety: pure functions, plus the thread_local scratch of sublane_tiles.
#pragma once

#include "kernels/cpu/x86/quant_sublanes.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

// A q4_K super-block by sub-block lanes: q[s] lane k holds the unsigned quants [4s, 4s + 4) of
// sub-block k; scales int32 lane k holds sub-block k's scale; mins 16-bit lanes
// 2k and 2k + 1 hold its min (beside the bsums of its two 16-element halves).
struct q4_K_sublanes {
    __m256i q[8];
    __m256i scales, mins;
    float d, dmin;

    q4_K_sublanes() = default;
    explicit q4_K_sublanes(const block_q4_K & x) : d(fp16(x.d)), dmin(fp16(x.dmin)) {
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        for (int j = 0; j < 4; ++j) {   // sub-blocks 2j and 2j + 1: the low and high nibbles of 32 bytes
            const __m256i bits = load256(x.qs + 32 * j);
            q[2 * j] = _mm256_and_si256(bits, m4);
            q[2 * j + 1] = _mm256_and_si256(_mm256_srli_epi16(bits, 4), m4);
        }
        transpose8_i32(q);
        const __m256i sm = k4_scales_mins_dup(x.scales);   // 8 scales, 8 mins, in both halves
        scales = _mm256_cvtepu8_epi32(_mm256_castsi256_si128(sm));
        mins = k4_mins_by_bsum(sm);
    }
};

// A q8_K super-block's quants by the lanes of q4_K_sublanes::q.
inline void by_32_element_sub_blocks(const int8_t * qs, __m256i q[8]) {
    for (int k = 0; k < 8; ++k) q[k] = load256(qs + 32 * k);
    transpose8_i32(q);
}
using q8_K_sublanes = q8_K_lanes<by_32_element_sub_blocks>;

// Four tokens' sub-block lanes (v[t] lane k) -> the pair sums lanes 2j + 2j + 1 by pair:
// p02 = [pair 0 of tokens 0..3 | pair 2 of tokens 0..3], p13 the same for pairs 1 and 3.
inline void pair_sums_by_token(const __m256i v[4], __m256i & p02, __m256i & p13) {
    __m256i s[2];
    for (int h = 0; h < 2; ++h) {
        const __m256i lo = _mm256_unpacklo_epi32(v[2 * h], v[2 * h + 1]);
        const __m256i hi = _mm256_unpackhi_epi32(v[2 * h], v[2 * h + 1]);
        // [pair 0 of tokens 2h, 2h + 1, pair 1 of them | pairs 2 and 3 likewise]
        s[h] = _mm256_add_epi32(_mm256_unpacklo_epi64(lo, hi), _mm256_unpackhi_epi64(lo, hi));
    }
    p02 = _mm256_unpacklo_epi64(s[0], s[1]);
    p13 = _mm256_unpackhi_epi64(s[0], s[1]);
}

// acc = fma(pair j's four token lanes, scale, acc) for j = 0, 1, 2, 3 in turn.
inline __m128 fma_pairs(__m256i p02, __m256i p13, __m128 scale, __m128 acc) {
    const __m256 f02 = _mm256_cvtepi32_ps(p02), f13 = _mm256_cvtepi32_ps(p13);
    acc = _mm_fmadd_ps(_mm256_castps256_ps128(f02), scale, acc);
    acc = _mm_fmadd_ps(_mm256_castps256_ps128(f13), scale, acc);
    acc = _mm_fmadd_ps(_mm256_extractf128_ps(f02, 1), scale, acc);
    return _mm_fmadd_ps(_mm256_extractf128_ps(f13, 1), scale, acc);
}

// The tile of sublane_tiles<block_q4_K, q4_K_sublanes, q8_K_sublanes, q4_K_by_sublanes> (quant_sublanes.h).
struct q4_K_by_sublanes {
    // T <= 8 tokens in groups of four, one f32 lane per token (lanes past T repeat the group's first
    // token and are dropped), as q4_K_batch_tile; ys holds the tokens' super-blocks by sub-block
    // lanes, block i of token t at ys[8 * i + t]: one sequential stream (the activation rows apart,
    // sixteen streams a row: 122 against 137 GFLOP/s). Two groups give two independent chains of
    // f32 steps per block.
    template <int T>
    static void tile(int64_t nb, const q4_K_sublanes * x, const q8_K_sublanes * ys, float * out, int64_t out_stride) {
        constexpr int G = (T + 3) / 4;
        __m128 acc[G], acc_m[G];
        for (int g = 0; g < G; ++g) acc[g] = acc_m[g] = _mm_setzero_ps();
        for (int64_t i = 0; i < nb; ++i) {
            const q4_K_sublanes & w = x[i];
            for (int g = 0; g < G; ++g) {
                __m256i isum[4], msum[4];
                const q8_K_sublanes * y[4];
                for (int k = 0; k < 4; ++k) y[k] = ys + 8 * i + (4 * g + k < T ? 4 * g + k : 4 * g);
                for (int k = 0; k < 4; ++k) {
                    // Lane k: sub-block k's sum (two chains of four: integers, any order), times its scale.
                    __m256i c[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
                    for (int s = 0; s < 8; ++s) c[s % 2] = _mm256_dpbusd_epi32(c[s % 2], w.q[s], y[k]->q[s]);
                    isum[k] = _mm256_mullo_epi32(_mm256_add_epi32(c[0], c[1]), w.scales);
                    msum[k] = _mm256_madd_epi16(w.mins, y[k]->bsums);
                }
                const __m128 d_a = _mm_setr_ps(y[0]->d, y[1]->d, y[2]->d, y[3]->d);
                __m256i p02, p13;
                pair_sums_by_token(isum, p02, p13);
                acc[g] = fma_pairs(p02, p13, _mm_mul_ps(_mm_set1_ps(w.d), d_a), acc[g]);
                pair_sums_by_token(msum, p02, p13);
                acc_m[g] = fma_pairs(p02, p13, _mm_mul_ps(_mm_set1_ps(w.dmin), d_a), acc_m[g]);
            }
        }
        alignas(16) float r[4 * G];
        for (int g = 0; g < G; ++g) _mm_store_ps(r + 4 * g, _mm_sub_ps(acc[g], acc_m[g]));
        for (int t = 0; t < T; ++t) out[t * out_stride] = r[t];
    }
};

}  // namespace
}  // namespace hearth::kernels::cpu::avx2
