// AVX2 q4_K and q6_K dot products as tiles: one weight row against T q8_K activation rows.
// The weight super-block is unpacked once and used for every token; all integer sums are
// exact, and the f32 steps are llama.cpp's (below): vec_dot and the matvec take its one-token
// order, tiles (a batch) its batch order. Each (row, token) pair of a tile runs the same f32
// operations whatever T is, so every tile shape gives the same bits.
#include <cmath>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/cpu/x86/avx2_util.h"
#include "kernels/cpu/x86/quant_avx2.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

inline __m256i load256(const void * p) { return _mm256_loadu_si256(static_cast<const __m256i *>(p)); }

// Broadcast of 16-bit lane k (of a 128-bit half duplicated in both halves) to all 16 lanes.
inline __m256i broadcast_i16(__m256i dup, int k) {
    const auto lo = static_cast<char>(2 * k), hi = static_cast<char>(2 * k + 1);
    return _mm256_shuffle_epi8(dup, _mm256_setr_epi8(lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi,
                                                     lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi));
}

// Low half lane 2k, high half lane 2k + 1: the scales of the two 16-element sub-blocks one
// 32-byte register of quants covers.
inline __m256i pair_i16(__m256i dup, int k) {
    const auto a = static_cast<char>(4 * k), b = static_cast<char>(4 * k + 1);
    const auto c = static_cast<char>(4 * k + 2), d = static_cast<char>(4 * k + 3);
    return _mm256_shuffle_epi8(dup, _mm256_setr_epi8(a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b,
                                                     c, d, c, d, c, d, c, d, c, d, c, d, c, d, c, d));
}

// The 8 scales (bytes 0..7) and 8 mins (bytes 8..15) of a q4_K block, 6 bits each.
inline __m128i k4_scales_mins(const uint8_t * packed) {
    uint32_t u[4];
    std::memcpy(u, packed, 12);
    constexpr uint32_t m6 = 0x3f3f3f3f, m4 = 0x0f0f0f0f, m2 = 0x03030303;
    u[3] = ((u[2] >> 4) & m4) | (((u[1] >> 6) & m2) << 4);
    const uint32_t mins_lo = u[1] & m6;
    u[1] = (u[2] & m4) | (((u[0] >> 6) & m2) << 4);
    u[2] = mins_lo;
    u[0] &= m6;
    return _mm_set_epi32(static_cast<int>(u[3]), static_cast<int>(u[2]), static_cast<int>(u[1]), static_cast<int>(u[0]));
}

inline float hsum128(__m128 v) {
    v = _mm_add_ps(v, _mm_movehl_ps(v, v));
    v = _mm_add_ss(v, _mm_movehdup_ps(v));
    return _mm_cvtss_f32(v);
}

// The exact int32 sum of 8 lanes.
inline int32_t hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
    return _mm_cvtsi128_si32(s);
}

// llama.cpp's orders (ggml-cpu on x86), which its batch and its one-token products follow:
//   q4_K, batch: per pair j of 32-element sub-blocks, the exact integers
//     I_j = sc * sum(q4 q8) + sc' * sum(q4' q8') and M_j = m * bsum + m' * bsum', then
//     acc = fma(float(I_j), d * d_a, acc), accm = fma(float(M_j), dmin * d_a, accm);
//   q4_K, one token: the same with I and M summed over the 256-block first;
//   result acc - accm.
//   q6_K, batch: acc = fma(float(sum over the block) * d, d_a, acc);
//   q6_K, one token: 8 f32 lanes by fma of (d_a * d) and the block's int32 lanes, summed last.
// (llama.cpp multiplies a batch of 2-3 tokens, or the last n % 4 tokens of a batch, in its
// one-token q4_K order, and fewer than 8 tokens in its one-token q6_K order; a batch here is
// any batch, so that a token's result does not depend on the batch it is in.)
template <int T, bool Batch>
void q4_K_tile(int64_t n, const block_q4_K * x, const uint8_t * a, size_t a_stride, float * out, int64_t out_stride) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    float acc[T], acc_m[T];
    for (int t = 0; t < T; ++t) acc[t] = acc_m[t] = 0.0f;
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const float dx = fp16(x[i].d);
        const float dmx = fp16(x[i].dmin);
        const __m256i mins_and_scales = _mm256_cvtepu8_epi16(k4_scales_mins(x[i].scales));
        const __m128i mins = _mm256_extracti128_si256(mins_and_scales, 1);
        const __m128i sc128 = _mm256_castsi256_si128(mins_and_scales);
        const __m256i scales = _mm256_set_m128i(sc128, sc128);
        const block_q8_K * y[T];
        alignas(16) int32_t m_pair[T][4];   // M_j
        __m256i isum[T];                     // one-token order: the lanes of sum_j I_j
        for (int t = 0; t < T; ++t) {
            y[t] = reinterpret_cast<const block_q8_K *>(a + t * a_stride) + i;
            // bsums of the 8 sub-blocks (pairs of the 16-element bsums), times the mins, by pairs.
            const __m256i bsums = load256(y[t]->bsums);
            const __m128i q8s = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
            _mm_store_si128(reinterpret_cast<__m128i *>(m_pair[t]), _mm_madd_epi16(mins, q8s));
            isum[t] = _mm256_setzero_si256();
        }
        for (int j = 0; j < 4; ++j) {
            const __m256i bits = load256(x[i].qs + 32 * j);
            const __m256i lo = _mm256_and_si256(bits, m4);
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), m4);
            const __m256i sl = broadcast_i16(scales, 2 * j);
            const __m256i sh = broadcast_i16(scales, 2 * j + 1);
            for (int t = 0; t < T; ++t) {
                const __m256i pl = _mm256_madd_epi16(sl, _mm256_maddubs_epi16(lo, load256(y[t]->qs + 64 * j)));
                const __m256i ph = _mm256_madd_epi16(sh, _mm256_maddubs_epi16(hi, load256(y[t]->qs + 64 * j + 32)));
                if constexpr (Batch) {
                    const int32_t ip = hsum_i32(_mm256_add_epi32(pl, ph));
                    acc[t] = std::fma(static_cast<float>(ip), dx * y[t]->d, acc[t]);
                    acc_m[t] = std::fma(static_cast<float>(m_pair[t][j]), dmx * y[t]->d, acc_m[t]);
                } else {
                    isum[t] = _mm256_add_epi32(isum[t], _mm256_add_epi32(pl, ph));   // integers: any order
                }
            }
        }
        if constexpr (!Batch) {
            for (int t = 0; t < T; ++t) {
                const int32_t msum = m_pair[t][0] + m_pair[t][1] + m_pair[t][2] + m_pair[t][3];
                acc[t] = std::fma(static_cast<float>(hsum_i32(isum[t])), dx * y[t]->d, acc[t]);
                acc_m[t] = std::fma(static_cast<float>(msum), dmx * y[t]->d, acc_m[t]);
            }
        }
    }
    for (int t = 0; t < T; ++t) out[t * out_stride] = acc[t] - acc_m[t];
}

template <int T, bool Batch>
void q6_K_tile(int64_t n, const block_q6_K * x, const uint8_t * a, size_t a_stride, float * out, int64_t out_stride) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i m2 = _mm256_set1_epi8(3);
    __m256 acc[T];
    float acc_batch[T];
    for (int t = 0; t < T; ++t) {
        acc[t] = _mm256_setzero_ps();
        acc_batch[t] = 0.0f;
    }
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const float dx = fp16(x[i].d);
        const __m256i all_scales = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x[i].scales)));
        const block_q8_K * y[T];
        __m256i sumi[T];
        for (int t = 0; t < T; ++t) {
            y[t] = reinterpret_cast<const block_q8_K *>(a + t * a_stride) + i;
            // The -32 offset of every quant, taken out once: -32 * sum_s scale_s * bsum_s.
            const __m256i offs = _mm256_madd_epi16(all_scales, load256(y[t]->bsums));
            sumi[t] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offs, 5));
        }
        for (int j = 0; j < 2; ++j) {
            const uint8_t * ql = x[i].ql + 64 * j;
            const __m256i bits1 = load256(ql);
            const __m256i bits2 = load256(ql + 32);
            const __m256i bitsh = load256(x[i].qh + 32 * j);
            // Unsigned 6-bit quants of elements [32k, 32k + 32) of this 128-element half.
            const __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(bits1, m4), _mm256_slli_epi16(_mm256_and_si256(bitsh, m2), 4)),
                _mm256_or_si256(_mm256_and_si256(bits2, m4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bitsh, 2), m2), 4)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(bits1, 4), m4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bitsh, 4), m2), 4)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(bits2, 4), m4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bitsh, 6), m2), 4)),
            };
            // The 8 scales of this half in both 128-bit lanes (the permute needs an immediate).
            const __m256i dup = j == 0 ? _mm256_permute2x128_si256(all_scales, all_scales, 0x00)
                                       : _mm256_permute2x128_si256(all_scales, all_scales, 0x11);
            __m256i sc[4];
            for (int k = 0; k < 4; ++k) sc[k] = pair_i16(dup, k);
            for (int t = 0; t < T; ++t) {
                const int8_t * q8 = y[t]->qs + 128 * j;
                for (int k = 0; k < 4; ++k) {
                    const __m256i p = _mm256_maddubs_epi16(q[k], load256(q8 + 32 * k));   // q <= 63: fits int16
                    sumi[t] = _mm256_add_epi32(sumi[t], _mm256_madd_epi16(sc[k], p));
                }
            }
        }
        for (int t = 0; t < T; ++t) {
            if constexpr (Batch)
                acc_batch[t] = std::fma(static_cast<float>(hsum_i32(sumi[t])) * dx, y[t]->d, acc_batch[t]);
            else
                acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(y[t]->d * dx), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
        }
    }
    for (int t = 0; t < T; ++t) out[t * out_stride] = Batch ? acc_batch[t] : hsum(acc[t]);
}

// Row by row; tokens in groups of four.
template <class B, template <int> class K>
void tiles(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
           int64_t n_tokens, float * out, int64_t out_stride) {
    const auto * ab = static_cast<const uint8_t *>(a);
    for (int64_t r = 0; r < n_rows; ++r) {
        const auto * x = reinterpret_cast<const B *>(static_cast<const uint8_t *>(w) + r * w_stride);
        int64_t t = 0;
        for (; t + 4 <= n_tokens; t += 4) K<4>::run(n, x, ab + t * a_stride, a_stride, out + t * out_stride + r, out_stride);
        switch (n_tokens - t) {
        case 3: K<3>::run(n, x, ab + t * a_stride, a_stride, out + t * out_stride + r, out_stride); break;
        case 2: K<2>::run(n, x, ab + t * a_stride, a_stride, out + t * out_stride + r, out_stride); break;
        case 1: K<1>::run(n, x, ab + t * a_stride, a_stride, out + t * out_stride + r, out_stride); break;
        default: break;
        }
    }
}

// Tiles are batches (matmul takes them for two or more tokens): llama.cpp's batch orders.
template <int T>
struct q4_K_kernel {
    static void run(int64_t n, const block_q4_K * x, const uint8_t * a, size_t s, float * out, int64_t os) { q4_K_tile<T, true>(n, x, a, s, out, os); }
};
template <int T>
struct q6_K_kernel {
    static void run(int64_t n, const block_q6_K * x, const uint8_t * a, size_t s, float * out, int64_t os) { q6_K_tile<T, true>(n, x, a, s, out, os); }
};

}  // namespace

float vec_dot_q4_K(int64_t n, const void * w, const void * a) {
    float out;
    q4_K_tile<1, false>(n, static_cast<const block_q4_K *>(w), static_cast<const uint8_t *>(a), 0, &out, 1);
    return out;
}

float vec_dot_q6_K(int64_t n, const void * w, const void * a) {
    float out;
    q6_K_tile<1, false>(n, static_cast<const block_q6_K *>(w), static_cast<const uint8_t *>(a), 0, &out, 1);
    return out;
}

void vec_dot_tile_q4_K(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                       int64_t n_tokens, float * out, int64_t out_stride) {
    tiles<block_q4_K, q4_K_kernel>(n, w, w_stride, n_rows, a, a_stride, n_tokens, out, out_stride);
}

void vec_dot_tile_q6_K(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                       int64_t n_tokens, float * out, int64_t out_stride) {
    tiles<block_q6_K, q6_K_kernel>(n, w, w_stride, n_rows, a, a_stride, n_tokens, out, out_stride);
}

}  // namespace hearth::kernels::cpu::avx2
