// The q4_0 / q5_0 kernels (and on AVX-512 VNNI q8_0's matvec) against q8_0 activations with the
// weights unsigned (q4_0: the nibble, 0..15; q5_0: nibble | fifth bit << 4, 0..31; q8_0: the byte
// + 128), as templates over how the weights are loaded (L) and how unsigned x signed bytes are
// summed by four into int32 lanes (D: maddubs + madd on AVX2, vpdpbusd on AVX-512 VNNI). The
// offset (8, 16 or 128) is taken off by starting each block's lanes at -offset * (the four
// activations of the lane): exactly the lanes of the signed form (quant_q8_0_tiles.h), and the
// same float steps, so bit-identical to it, without the two sign instructions per block and row.
// L provides block, offset, load(block), matvec_prefetch (bytes ahead, 0: none) and
// matvec_rows (rows side by side on AVX-512, see matvec_rows()); D provides
// dot(start, x_unsigned, y_signed) = start + the lane sums of x * y; R x T is the
// register tile of prefill (AVX2 has 16 vector registers, AVX-512 32).
// Internal linkage (anonymous namespace): each x86 file compiles its own copy with its flags.
// Thread-safety: pure functions, plus thread_local scratch in unsigned_rows and unsigned_tiles.
#pragma once

#include <vector>

#include "kernels/blocks.h"
#include "kernels/cpu/quant_variants.h"
#include "kernels/cpu/x86/avx2_util.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

// How far ahead (bytes) a matvec asks for the weights of the nibble formats (q4_0, q5_0): their
// unpacking is slow enough per byte that the out-of-order window runs only a little ahead of
// the loads, and each call's rows are a fresh stream for the hardware prefetchers. One thread,
// every matrix from memory, 0 / 1 / 2 / 3 / 4 KiB ahead: q5_0 4864 x 896 14.7 / 16.0 / 17.6 /
// 17.4 / 17.2 GB/s, 896 x 896 15.3 / 15.4 / 16.7 / 16.9 / 16.5; q4_0 4864 x 896 14.6 / 15.4 /
// 17.6 / 17.9 / 17.4. q8_0 (lighter work per byte) lost with it: 151936 x 896 19.5 -> 17.8 at
// 2 KiB, 14.6 at 4 KiB; so did q4_K and q6_K's one-token dots. Into L2 instead (prefetcht1)
// the nibble formats gained nothing, and q8_0 1 KiB ahead gained alone (4864 x 896 11.9 -> 16.6)
// but not in the decode on two threads (68.2 -> 67.4 t/s, medians of 10). On the AVX2 path
// (11-13 GB/s, bound by its own work) it neither gains nor loses. Default model, decode on two
// threads, alternating in one process: 72.0 -> 74.5 t/s (medians of 8).
constexpr int k_nibble_matvec_prefetch = 2048;

// Rows a matvec takes side by side on AVX-512 (see unsigned_rows): the nibble formats 3, q8_0 4.
constexpr int k_nibble_matvec_rows = 3;

// L::matvec_rows where the registers hold it; AVX2's 16 stay at two rows (one thread, from
// memory, 2 / 3 / 4 rows: q5_0 4864 x 896 14.3 / 12.2 / 12.3 GB/s, q4_0 13.3 / 11.2 / 11.8).
template <class L>
constexpr int matvec_rows() {
#if defined(__AVX512F__)
    return L::matvec_rows;
#else
    return 2;
#endif
}

// q4_0's weights unsigned: the nibbles as they are (q5_0's fifth bits load differently per ISA).
struct q4_0_unsigned {
    using block = block_q4_0;
    static constexpr char offset = 8;
    static constexpr int matvec_prefetch = k_nibble_matvec_prefetch;
    static constexpr int matvec_rows = k_nibble_matvec_rows;
    static __m256i load(const block & b) { return bytes_from_nibbles(b.qs); }
};

// -offset * (sum of each group of four activations), as int32 lanes.
template <class L, class D>
__m256i offset_lanes(__m256i y) {
    return D::dot(_mm256_setzero_si256(), _mm256_set1_epi8(L::offset), _mm256_sub_epi8(_mm256_setzero_si256(), y));
}

// Up to four rows' f16 scales (packed, row k in bits 16k..16k+15) as f32 lanes 0..3 and again
// 4..7, and lane k of such a vector in all eight lanes: how a tile takes each row's scale
// product from one conversion and one multiply. The in-lane permute with an immediate
// (vpermilps) is cheaper than a cross-lane one (vpermps) and holds no index register, which a
// tile's accumulators need (q5_0 tile 111 -> 116 GFLOP/s).
inline __m128 f16x4(uint64_t packed) { return _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(packed))); }
inline __m256 f16x4_lanes(uint64_t packed) {
    const __m128 f = f16x4(packed);
    return _mm256_set_m128(f, f);
}
inline __m256 lane(__m256 v, int k) {
    switch (k) {
        case 0: return _mm256_permute_ps(v, 0x00);
        case 1: return _mm256_permute_ps(v, 0x55);
        case 2: return _mm256_permute_ps(v, 0xAA);
        default: return _mm256_permute_ps(v, 0xFF);
    }
}

// One block's offset lanes (see offset_lanes) as an element of a std::vector.
struct offset_block {
    __m256i v;
};

// What every weight row of a call shares, worked out once per call (not once per row or tile):
// each activation row's offset lanes and f32 scale per block, entry [t * nb + i].
struct activation_offsets {
    std::vector<offset_block> start;
    std::vector<float> dy;

    template <class L, class D>
    void fill(const uint8_t * a, size_t a_stride, int64_t n_tokens, int64_t nb) {
        const auto n = static_cast<size_t>(n_tokens * nb);
        if (dy.size() < n) {
            start.resize(n);
            dy.resize(n);
        }
        for (int64_t t = 0; t < n_tokens; ++t) {
            const auto * y = reinterpret_cast<const block_q8_0 *>(a + t * a_stride);
            for (int64_t i = 0; i < nb; ++i) {
                start[t * nb + i].v = offset_lanes<L, D>(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(y[i].qs)));
                dy[t * nb + i] = fp16(y[i].d);
            }
        }
    }
};

// The scale products d_w * d_a of blocks i..i+3 of one weight row, in lanes 0..3 and again
// 4..7 (for lane()): one conversion and one multiply for four blocks, the same f32 products as
// one at a time.
template <class B>
__m256 scale_products4(const B * x, const float * dy) {
    const uint64_t packed = static_cast<uint64_t>(x[0].d) | static_cast<uint64_t>(x[1].d) << 16 |
                            static_cast<uint64_t>(x[2].d) << 32 | static_cast<uint64_t>(x[3].d) << 48;
    const __m128 p = _mm_mul_ps(f16x4(packed), _mm_loadu_ps(dy));
    return _mm256_set_m128(p, p);
}

// Matvec: one activation row against many weight rows, so each block's offset lanes are worked
// out once for the call, not once per row. Rows go side by side, one from each of
// matvec_rows<L>() parts of the call's rows (rows_in_parts): that many accumulation chains (one
// row's chain, an FMA's latency per block, bound the loop once the scale products came four at
// a time) in as many long sequential streams. One thread, 896-column rows, two rows against one
// at a time: q5_0 20.7 -> 23.3 GB/s in cache and 16.4 -> 19.2-20.6 from memory, q8_0 37 -> 45
// and 25 -> 28-30. On AVX-512, 2 / 3 / 4 rows (in one process, alternating; q4_0 / q5_0 with
// their prefetch): q5_0 4864 x 896 from memory 18.9 / 19.6 / 17.6 GB/s, 896 x 896 18.4 / 19.5 /
// 18.3, in cache 23.2 / 24.7 / 21.4; q4_0 4864 x 896 19.3 / 20.7 / 20.1; q8_0 151936 x 896 20.6 /
// 22.1 / 24.6, 4864 x 896 19.5 / 22.3 / 24.2, 896 x 896 18.5 / 21.3 / 22.6. Default model's
// decode on two threads, 3 and 4 rows against 2: 77.0 -> 78.5 t/s (medians of 8), 84.6 -> 90.0
// where the host gave 41-46 GB/s. Each row keeps its own order of sums (llama.cpp's one-token
// order), so the grouping changes no bit. (q4_K's one-token dot, bound by its own work at 16.5
// GB/s, gained nothing from the halves and lost 25 % from two rows side by side.)
template <class L, class D>
void unsigned_rows(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    using block = typename L::block;
    const int64_t nb = n / 32;
    const auto * y = static_cast<const block_q8_0 *>(a);
    thread_local activation_offsets offsets;
    offsets.fill<L, D>(static_cast<const uint8_t *>(a), 0, 1, nb);
    const offset_block * start = offsets.start.data();
    const float * dy = offsets.dy.data();
    // RR rows from r on, dr apart.
    auto rows = [&]<int RR>(int64_t r, int64_t dr) {
        const block * x[RR];
        __m256 acc[RR];
        for (int k = 0; k < RR; ++k) {
            x[k] = reinterpret_cast<const block *>(static_cast<const uint8_t *>(w) + (r + k * dr) * stride);
            acc[k] = _mm256_setzero_ps();
        }
        auto add_block = [&](int k, int64_t i, __m256 scale) {
            const __m256i yq = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(y[i].qs));
            const __m256i s = D::dot(start[i].v, L::load(x[k][i]), yq);
            acc[k] = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(s), acc[k]);
        };
        int64_t i = 0;
        for (; i + 4 <= nb; i += 4) {
            for (int k = 0; k < RR; ++k) {
                if constexpr (L::matvec_prefetch > 0)
                    _mm_prefetch(reinterpret_cast<const char *>(x[k] + i) + L::matvec_prefetch, _MM_HINT_T0);
                const __m256 p = scale_products4(x[k] + i, dy + i);
                add_block(k, i, lane(p, 0));
                add_block(k, i + 1, lane(p, 1));
                add_block(k, i + 2, lane(p, 2));
                add_block(k, i + 3, lane(p, 3));
            }
        }
        for (; i < nb; ++i)
            for (int k = 0; k < RR; ++k) add_block(k, i, _mm256_set1_ps(fp16(x[k][i].d) * dy[i]));
        for (int k = 0; k < RR; ++k) out[r + k * dr] = hsum(acc[k]);
    };
    rows_in_parts<matvec_rows<L>()>(n_rows, rows);
}

// Block i of a tile's R weight rows, unpacked once for all the tile's token tiles (not once
// per token tile: q5_0 through matmul 124 -> 138 GFLOP/s): each row's unsigned bytes, and the
// rows' scales (f16x4_lanes).
struct unpacked_block {
    __m256i x[4];
    __m256 dx;
};

template <class L, int R>
void unpack_rows(int64_t nb, const uint8_t * w, size_t w_stride, std::vector<unpacked_block> & out) {
    using block = typename L::block;
    if (out.size() < static_cast<size_t>(nb)) out.resize(static_cast<size_t>(nb));
    for (int64_t i = 0; i < nb; ++i) {
        uint64_t dx_packed = 0;
        for (int r = 0; r < R; ++r) {
            const block & b = reinterpret_cast<const block *>(w + r * w_stride)[i];
            out[i].x[r] = L::load(b);
            dx_packed |= static_cast<uint64_t>(b.d) << (16 * r);
        }
        out[i].dx = f16x4_lanes(dx_packed);
    }
}

// R unpacked weight rows against T activation rows, whose offset lanes and scales start at
// start / dy (row t at t * nb). Per block, the R scale products of each token come from one
// multiply, each (row, token) pair taking its own by a lane permute: through memory (products
// stored, then broadcast loads) measured 4-6 % slower.
template <class D, int R, int T>
    requires(R <= 4)
void unsigned_tile(int64_t nb, const unpacked_block * w, const uint8_t * a, size_t a_stride, const offset_block * start,
                   const float * dy, float * out, int64_t out_stride) {
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        __m256i x[R];
        for (int r = 0; r < R; ++r) x[r] = w[i].x[r];
        const __m256 dx = w[i].dx;
        for (int t = 0; t < T; ++t) {
            const __m256 prod = _mm256_mul_ps(dx, _mm256_set1_ps(dy[t * nb + i]));
            const block_q8_0 & yb = reinterpret_cast<const block_q8_0 *>(a + t * a_stride)[i];
            const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(yb.qs));
            const __m256i y_start = start[t * nb + i].v;
            for (int r = 0; r < R; ++r) {
                const __m256i s = D::dot(y_start, x[r], y);
                acc[r][t] = _mm256_fmadd_ps(lane(prod, r), _mm256_cvtepi32_ps(s), acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) out[t * out_stride + r] = hsum(acc[r][t]);
}

// Prefill: tiles of R rows x T tokens (T_max, then one smaller tile for the rest of the
// tokens), rows outer so a tile's unpacked rows stay in L1 while the tokens pass (tokens outer,
// with every row of the call unpacked first, measured no faster through matmul). Every token's
// offset lanes are worked out once for the call (once per tile before: 105 -> 111 GFLOP/s).
template <class L, class D, int R, int T_max = 4>
void unsigned_tiles(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                    int64_t n_tokens, float * out, int64_t out_stride) {
    const auto * wb = static_cast<const uint8_t *>(w);
    const auto * ab = static_cast<const uint8_t *>(a);
    const int64_t nb = n / 32;
    thread_local activation_offsets offsets;
    thread_local std::vector<unpacked_block> rows_unpacked;
    offsets.fill<L, D>(ab, a_stride, n_tokens, nb);
    auto rows = [&]<int RR>(int64_t r) {
        unpack_rows<L, RR>(nb, wb + r * w_stride, w_stride, rows_unpacked);
        if (r + 2 * RR <= n_rows) prefetch_bytes(wb + (r + RR) * w_stride, RR * w_stride);   // the next group's rows
        for_token_tiles<T_max>(n_tokens, [&]<int T>(int64_t t0) {
            unsigned_tile<D, RR, T>(nb, rows_unpacked.data(), ab + t0 * a_stride, a_stride, offsets.start.data() + t0 * nb,
                                    offsets.dy.data() + t0 * nb, out + t0 * out_stride + r, out_stride);
        });
    };
    int64_t r = 0;
    for (; r + R <= n_rows; r += R) rows.template operator()<R>(r);
    for (; r < n_rows; ++r) rows.template operator()<1>(r);
}

// One row: the matvec's kernel (same float steps as the tiles).
template <class L, class D>
float unsigned_row(int64_t n, const void * w, const void * a) {
    float out;
    unsigned_rows<L, D>(n, w, 0, a, &out, 1);
    return out;
}

}  // namespace
}  // namespace hearth::kernels::cpu::avx2
