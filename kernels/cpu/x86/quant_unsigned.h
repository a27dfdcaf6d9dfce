// The q4_0 / q5_0 kernels (and on AVX-512 VNNI q8_0's matvec) against q8_0 activations with the
// weights unsigned (q4_0: the nibble, 0..15; q5_0: nibble | fifth bit << 4, 0..31; q8_0: the byte
// + 128), as templates over how the weights are loaded (L) and how unsigned x signed bytes are
// summed by four into int32 lanes (D: maddubs + madd on AVX2, vpdpbusd on AVX-512 VNNI). The
// offset (8, 16 or 128) is taken off by starting each block's lanes at -offset * (the four
// activations of the lane): exactly the lanes of the signed form (quant_q8_0_tiles.h), and the
// same float steps, so bit-identical to it, without the two sign instructions per block and row.
// D provides dot(start, x_unsigned, y_signed) = start + the lane sums of x * y; R x T is the
// register tile of prefill (AVX2 has 16 vector registers, AVX-512 32).
// Internal linkage (anonymous namespace): each x86 file compiles its own copy with its flags.
// Thread-safety: pure functions, plus a thread_local scratch in unsigned_rows.
#pragma once

#include <vector>

#include "kernels/blocks.h"
#include "kernels/cpu/x86/avx2_util.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

// q4_0's weights unsigned: the nibbles as they are (q5_0's fifth bits load differently per ISA).
struct q4_0_unsigned {
    using block = block_q4_0;
    static constexpr char offset = 8;
    static constexpr int rows_per_step = 2;
    static __m256i load(const block & b) { return bytes_from_nibbles(b.qs); }
};

// -offset * (sum of each group of four activations), as int32 lanes.
template <class L, class D>
__m256i offset_lanes(__m256i y) {
    return D::dot(_mm256_setzero_si256(), _mm256_set1_epi8(L::offset), _mm256_sub_epi8(_mm256_setzero_si256(), y));
}

// Up to four rows' f16 scales (packed, row k in bits 16k..16k+15) as f32 lanes 0..3, and lane
// k of such a vector in all eight lanes: how the matvec takes each row's scale product from
// one conversion and one multiply.
inline __m256 f16x4_lanes(uint64_t packed) {
    return _mm256_castps128_ps256(_mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(packed))));
}
inline __m256 lane(__m256 v, int k) { return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(k)); }

// The same for the tiles, with lanes 0..3 repeated in 4..7 so that an in-lane permute with an
// immediate (vpermilps) takes lane k out: cheaper than the cross-lane one, and it holds no
// index register, which a tile's accumulators need (q5_0 tile 111 -> 116 GFLOP/s; the matvec,
// which takes only two products per conversion, loses 2 % to the extra duplication).
inline __m256 f16x4_lanes_twice(uint64_t packed) {
    const __m128 f = _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(packed)));
    return _mm256_set_m128(f, f);
}
inline __m256 lane_twice(__m256 v, int k) {
    switch (k) {
        case 0: return _mm256_permute_ps(v, 0x00);
        case 1: return _mm256_permute_ps(v, 0x55);
        case 2: return _mm256_permute_ps(v, 0xAA);
        default: return _mm256_permute_ps(v, 0xFF);
    }
}

// Matvec: how far ahead of the rows being read the prefetches reach (Zen 4: 2 KB too close,
// 4-8 KB alike).
constexpr size_t k_prefetch_ahead = 4096;

inline void prefetch_rows(const uint8_t * p, size_t stride, int n_rows, size_t row_bytes) {
    for (int r = 0; r < n_rows; ++r)
        for (size_t off = 0; off < row_bytes; off += 64) _mm_prefetch(reinterpret_cast<const char *>(p + r * stride + off), _MM_HINT_T0);
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

// N consecutive weight rows (from w, `stride` apart) against one activation row whose offset
// lanes and scales are precomputed: out[0..N), each row with its own f32 accumulation chain.
template <class L, class D, int N, bool Prefetch = true>
    requires(N <= 4)
void unsigned_rows_step(int64_t nb, const uint8_t * w, size_t stride, size_t row_bytes, const block_q8_0 * y,
                        const offset_block * start, const float * dy, float * out) {
    using block = typename L::block;
    if constexpr (Prefetch) prefetch_rows(w + k_prefetch_ahead, stride, N, row_bytes);
    const block * x[N];
    __m256 acc[N];
    for (int k = 0; k < N; ++k) {
        x[k] = reinterpret_cast<const block *>(w + k * stride);
        acc[k] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < nb; ++i) {
        const __m256i yq = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(y[i].qs));
        // The N rows' scale products from one conversion and one multiply (a conversion,
        // multiply and broadcast per row: q5_0 matvec 8-11 % slower).
        uint64_t d_packed = 0;
        for (int k = 0; k < N; ++k) d_packed |= static_cast<uint64_t>(x[k][i].d) << (16 * k);
        const __m256 prod = _mm256_mul_ps(f16x4_lanes(d_packed), _mm256_set1_ps(dy[i]));
        for (int k = 0; k < N; ++k) {
            const __m256i s = D::dot(start[i].v, L::load(x[k][i]), yq);
            acc[k] = _mm256_fmadd_ps(lane(prod, k), _mm256_cvtepi32_ps(s), acc[k]);
        }
    }
    for (int k = 0; k < N; ++k) out[k] = hsum(acc[k]);
}

// Matvec: one activation row against many weight rows, so each block's offset lanes are worked
// out once for the call, not once per row. L::rows_per_step rows at a time. q4_0 / q5_0 take two
// (two accumulation chains instead of one waiting on its FMA latency), with the rows 4 KB on
// prefetched explicitly: two interleaved rows alone lose the hardware prefetchers (q5_0 from
// memory, one thread: 12.2 GB/s one row at a time, 6.5 two rows, 19.0 two rows with the
// prefetches). q8_0's longer blocks stream best one row at a time with the hardware prefetchers
// alone (two rows with prefetches: 8.6-16 GB/s against 19-20).
template <class L, class D>
void unsigned_rows(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    const int64_t nb = n / 32;
    const auto * y = static_cast<const block_q8_0 *>(a);
    thread_local activation_offsets offsets;
    offsets.fill<L, D>(static_cast<const uint8_t *>(a), 0, 1, nb);
    const offset_block * start = offsets.start.data();
    const float * dy = offsets.dy.data();
    const auto * wb = static_cast<const uint8_t *>(w);
    const size_t row_bytes = static_cast<size_t>(nb) * sizeof(typename L::block);
    int64_t r = 0;
    if constexpr (L::rows_per_step == 1) {
        for (; r < n_rows; ++r)
            unsigned_rows_step<L, D, 1, false>(nb, wb + r * stride, stride, row_bytes, y, start, dy, out + r);
    } else {
        for (; r + 2 <= n_rows; r += 2)
            unsigned_rows_step<L, D, 2>(nb, wb + r * stride, stride, row_bytes, y, start, dy, out + r);
        if (r < n_rows) unsigned_rows_step<L, D, 1>(nb, wb + r * stride, stride, row_bytes, y, start, dy, out + r);
    }
}

// Block i of a tile's R weight rows, unpacked once for all the tile's token tiles (not once
// per token tile: q5_0 through matmul 124 -> 138 GFLOP/s): each row's unsigned bytes, and the
// rows' scales (f16x4_lanes_twice).
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
        out[i].dx = f16x4_lanes_twice(dx_packed);
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
                acc[r][t] = _mm256_fmadd_ps(lane_twice(prod, r), _mm256_cvtepi32_ps(s), acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) out[t * out_stride + r] = hsum(acc[r][t]);
}

// Prefill: tiles of R rows x T tokens (T_max, then one smaller tile for the rest of the
// tokens), rows outer so a tile's rows stay in L1 while the tokens pass (tokens outer, rows
// from L2: q5_0 tile 105 -> 70-86 GFLOP/s). Every token's offset lanes are worked out once for
// the call (once per tile before: 105 -> 111 GFLOP/s).
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
