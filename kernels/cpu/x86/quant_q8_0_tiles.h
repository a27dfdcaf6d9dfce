// The signed 32-element block kernels against q8_0 activations (q8_0, iq4_nl; q4_0 and q5_0
// are in quant_unsigned.h), as templates over how a block's weights are loaded (L) and how
// |x| . (y signed like x) is summed into 8 int32 lanes (D): the AVX2 files use maddubs + madd,
// the AVX-512 VNNI ones vpdpbusd. Both give the same int32 lanes (no product pair reaches the
// int16 limit: |x| <= 128, |y| <= 127), and the float steps are the same, so every variant is
// bit-identical.
// Internal linkage (anonymous namespace): each x86 file compiles its own copy with its flags.
// Thread-safety: pure functions.
#pragma once

#include "kernels/blocks.h"
#include "kernels/cpu/quant_variants.h"
#include "kernels/cpu/x86/avx2_util.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

// Loads the 32 signed weights of one block as bytes.
struct q8_0_load {
    using block = block_q8_0;
    static __m256i load(const block & b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b.qs)); }
};
struct iq4_nl_load {
    using block = block_iq4_nl;
    static __m256i load(const block & b) {
        const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i *>(k_iq4nl_values));
        const __m256i t2 = _mm256_broadcastsi128_si256(table);
        return _mm256_shuffle_epi8(t2, bytes_from_nibbles(b.qs));
    }
};

// R weight rows against T q8_0 activation rows: out[t * out_stride + r]. Each (row, token) pair
// has one f32 accumulator and sees exactly the operations of the 1 x 1 case, so every tile
// shape gives bit-identical results; bigger tiles share the weight unpacking across tokens and
// the activation loads across rows (the prefill case).
template <class L, class D, int R, int T>
void dot_q8_0_tile(int64_t n, const uint8_t * w, size_t w_stride, const uint8_t * a, size_t a_stride, float * out,
                   int64_t out_stride) {
    using block = typename L::block;
    const int64_t nb = n / 32;
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        __m256i x[R], ax[R];
        float dx[R];
        for (int r = 0; r < R; ++r) {
            const block & b = reinterpret_cast<const block *>(w + r * w_stride)[i];
            x[r] = L::load(b);
            ax[r] = _mm256_sign_epi8(x[r], x[r]);
            dx[r] = fp16(b.d);
        }
        for (int t = 0; t < T; ++t) {
            const block_q8_0 & yb = reinterpret_cast<const block_q8_0 *>(a + t * a_stride)[i];
            const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(yb.qs));
            const float dy = fp16(yb.d);
            for (int r = 0; r < R; ++r) {
                // |x| * (y with x's sign): a u8 x i8 product that maddubs takes (y is never -128).
                const __m256i s = D::dot(ax[r], _mm256_sign_epi8(y, x[r]));
                acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(dx[r] * dy), _mm256_cvtepi32_ps(s), acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) out[t * out_stride + r] = hsum(acc[r][t]);
}

template <class L, class D, int R>
void dot_q8_0_tile_tokens(int64_t n, const uint8_t * w, size_t w_stride, const uint8_t * a, size_t a_stride,
                          int64_t n_tokens, float * out, int64_t out_stride) {
    for_token_tiles(n_tokens, [&]<int T>(int64_t t) {
        dot_q8_0_tile<L, D, R, T>(n, w, w_stride, a + t * a_stride, a_stride, out + t * out_stride, out_stride);
    });
}

template <class L, class D>
float dot_q8_0_row(int64_t n, const void * w, const void * a) {
    float out;
    dot_q8_0_tile<L, D, 1, 1>(n, static_cast<const uint8_t *>(w), 0, static_cast<const uint8_t *>(a), 0, &out, 1);
    return out;
}

template <class L, class D>
void dot_q8_0_multi(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    const auto * wb = static_cast<const uint8_t *>(w);
    const auto * ab = static_cast<const uint8_t *>(a);
    // Rows in pairs from the two halves (two long sequential streams); four adjacent rows
    // interleaved (four streams jumping at every group) measured half the bandwidth.
    rows_in_halves(n_rows, [&]<int R>(int64_t r, int64_t dr) {
        float o[R];
        dot_q8_0_tile<L, D, R, 1>(n, wb + r * stride, static_cast<size_t>(dr) * stride, ab, 0, o, 1);
        for (int k = 0; k < R; ++k) out[r + k * dr] = o[k];
    });
}

template <class L, class D>
void dot_q8_0_tiles(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                    int64_t n_tokens, float * out, int64_t out_stride) {
    const auto * wb = static_cast<const uint8_t *>(w);
    const auto * ab = static_cast<const uint8_t *>(a);
    int64_t r = 0;
    for (; r + 2 <= n_rows; r += 2) dot_q8_0_tile_tokens<L, D, 2>(n, wb + r * w_stride, w_stride, ab, a_stride, n_tokens, out + r, out_stride);
    if (r < n_rows) dot_q8_0_tile_tokens<L, D, 1>(n, wb + r * w_stride, w_stride, ab, a_stride, n_tokens, out + r, out_stride);
}

}  // namespace
}  // namespace hearth::kernels::cpu::avx2
