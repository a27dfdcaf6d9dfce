// q4_K and q6_K dot products as tiles: one weight row against T q8_K activation rows, as
// templates over M, which adds the 16-bit products of quant pairs times 16-bit scales into int32
// lanes (M::madd_add(acc, scales, pairs): madd + add on AVX2, one vpdpwssd on AVX-512 VNNI; the
// same exact integers). The weight super-block is unpacked once and used for every token; all
// integer sums are exact, and the f32 steps are llama.cpp's (below): vec_dot and the matvec take
// its one-token order, tiles (a batch) its batch order. Each (row, token) pair of a tile runs
// the same f32 operations whatever T is, so every tile shape gives the same bits.
// Internal linkage (anonymous namespace): each x86 file compiles its own copy with its flags.
// Thread-safety: pure functions, plus k_tiles' thread_local row.
#pragma once

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/blocks.h"
#include "kernels/cpu/x86/avx2_util.h"
#include "kernels/cpu/x86/kquant_util.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

// The exact int32 sum of 8 lanes.
inline int32_t hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
    return _mm_cvtsi128_si32(s);
}

// [sum of v0's lanes, ..., sum of v3's lanes], exact. Unpacks and adds (one uop each), where
// vphaddd is three.
inline __m128i hsum4_i32(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
    const __m256i t01 = _mm256_add_epi32(_mm256_unpacklo_epi32(v0, v1), _mm256_unpackhi_epi32(v0, v1));
    const __m256i t23 = _mm256_add_epi32(_mm256_unpacklo_epi32(v2, v3), _mm256_unpackhi_epi32(v2, v3));
    const __m256i u = _mm256_add_epi32(_mm256_unpacklo_epi64(t01, t23), _mm256_unpackhi_epi64(t01, t23));
    return _mm_add_epi32(_mm256_castsi256_si128(u), _mm256_extracti128_si256(u, 1));
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

// The scales and mins of a q4_K block: as bytes (8 scales, 8 mins) in both 128-bit halves, for
// broadcast_u8_i16, and the mins as 16-bit lanes in a 128-bit register.
struct q4_K_scales {
    __m256i scales;
    __m128i mins;
    explicit q4_K_scales(const block_q4_K & b)
        : scales(k4_scales_mins_dup(b.scales)), mins(_mm_unpackhi_epi8(_mm256_castsi256_si128(scales), _mm_setzero_si128())) {}
};

// M_j of one activation block for the pairs j = 0..3: the mins times the pairs' bsums.
inline __m128i q4_K_min_pairs(__m128i mins, const block_q8_K & y) {
    const __m256i bsums = load256(y.bsums);
    return _mm_madd_epi16(mins, _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1)));
}

// Pair j of a q4_K block's sub-blocks: its 64 quants (low nibbles: the first 32, high: the
// next 32) and the two sub-blocks' scales in all lanes.
struct q4_K_pair {
    __m256i lo, hi, sl, sh;
    q4_K_pair() = default;
    q4_K_pair(const block_q4_K & b, const q4_K_scales & sm, int j) {
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        const __m256i bits = load256(b.qs + 32 * j);
        lo = _mm256_and_si256(bits, m4);
        hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), m4);
        sl = broadcast_u8_i16(sm.scales, 2 * j);
        sh = broadcast_u8_i16(sm.scales, 2 * j + 1);
    }
};

// acc + the 8 int32 lanes of I_j (pair j of sub-blocks) for one activation block.
template <class M>
__m256i q4_K_pair_lanes(__m256i acc, const q4_K_pair & q, const block_q8_K & y, int j) {
    acc = M::madd_add(acc, q.sl, _mm256_maddubs_epi16(q.lo, load256(y.qs + 64 * j)));
    return M::madd_add(acc, q.sh, _mm256_maddubs_epi16(q.hi, load256(y.qs + 64 * j + 32)));
}

// [sum of a's lanes, sum of b's lanes] in lanes 0 and 1, exact.
inline __m128i hsum2_i32(__m256i a, __m256i b) {
    const __m256i t = _mm256_add_epi32(_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b));
    const __m256i u = _mm256_add_epi32(t, _mm256_shuffle_epi32(t, 0x4E));   // swap the 64-bit halves
    return _mm_add_epi32(_mm256_castsi256_si128(u), _mm256_extracti128_si256(u, 1));
}

// One token, llama.cpp's one-token order.
template <class M>
float q4_K_one_token(int64_t n, const block_q4_K * x, const block_q8_K * y) {
    float acc = 0.0f, acc_m = 0.0f;
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const q4_K_scales sm(x[i]);
        // Integers, so any order: two chains of four multiply-adds, where one chain of eight made
        // the block wait on the multiply-add latency.
        __m256i isum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
        for (int j = 0; j < 4; ++j) isum[j / 2] = q4_K_pair_lanes<M>(isum[j / 2], q4_K_pair(x[i], sm, j), y[i], j);
        const __m256i msum = _mm256_madd_epi16(k4_mins_by_bsum(sm.scales), load256(y[i].bsums));
        const __m128 sums = _mm_cvtepi32_ps(hsum2_i32(_mm256_add_epi32(isum[0], isum[1]), msum));   // [I, M]
        acc = std::fma(_mm_cvtss_f32(sums), fp16(x[i].d) * y[i].d, acc);
        acc_m = std::fma(_mm_cvtss_f32(_mm_movehdup_ps(sums)), fp16(x[i].dmin) * y[i].d, acc_m);
    }
    return acc - acc_m;
}

// A q4_K super-block unpacked for the batch tile: every pair's quants and scales, the mins and
// the two f32 scales.
struct q4_K_unpacked {
    q4_K_pair pairs[4];
    __m128i mins;
    float d, dmin;

    q4_K_unpacked() = default;
    explicit q4_K_unpacked(const block_q4_K & x) : d(fp16(x.d)), dmin(fp16(x.dmin)) {
        const q4_K_scales sm(x);
        for (int j = 0; j < 4; ++j) pairs[j] = q4_K_pair(x, sm, j);
        mins = sm.mins;
    }
};

// T <= 4 tokens in the batch order, one f32 lane per token (lanes past T repeat token 0 and
// are dropped): the per-pair sums of all four tokens reduced together and one vector fma per
// pair, where a scalar reduction and fma per token and pair had cost half the tile's time.
template <class M, int T>
void q4_K_batch_tile(int64_t nb, const q4_K_unpacked * x, const uint8_t * a, size_t a_stride, float * out, int64_t out_stride) {
    __m128 acc = _mm_setzero_ps(), acc_m = _mm_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        const block_q8_K * y[4];
        __m128 m_pair[4];   // per token: M_0..M_3 (int32 bits)
        for (int t = 0; t < 4; ++t) {
            y[t] = reinterpret_cast<const block_q8_K *>(a + (t < T ? t : 0) * a_stride) + i;
            m_pair[t] = _mm_castsi128_ps(q4_K_min_pairs(x[i].mins, *y[t]));
        }
        _MM_TRANSPOSE4_PS(m_pair[0], m_pair[1], m_pair[2], m_pair[3]);   // now per pair: the 4 tokens
        const __m128 dy = _mm_setr_ps(y[0]->d, y[1]->d, y[2]->d, y[3]->d);
        const __m128 d = _mm_mul_ps(_mm_set1_ps(x[i].d), dy);
        const __m128 dmin = _mm_mul_ps(_mm_set1_ps(x[i].dmin), dy);
        for (int j = 0; j < 4; ++j) {
            const q4_K_pair & q = x[i].pairs[j];
            __m256i v[4];
            for (int t = 0; t < 4; ++t) v[t] = q4_K_pair_lanes<M>(_mm256_setzero_si256(), q, *y[t], j);
            acc = _mm_fmadd_ps(_mm_cvtepi32_ps(hsum4_i32(v[0], v[1], v[2], v[3])), d, acc);
            acc_m = _mm_fmadd_ps(_mm_cvtepi32_ps(_mm_castps_si128(m_pair[j])), dmin, acc_m);
        }
    }
    alignas(16) float r[4];
    _mm_store_ps(r, _mm_sub_ps(acc, acc_m));
    for (int t = 0; t < T; ++t) out[t * out_stride] = r[t];
}

// Half j (elements [128 j, 128 j + 128)) of a q6_K super-block unpacked: the unsigned 6-bit
// quants of elements [32k, 32k + 32) of the half, and each register's two sub-block scales.
struct q6_K_half {
    __m256i q[4], sc[4];

    q6_K_half() = default;
    q6_K_half(const block_q6_K & x, __m256i all_scales, int j) {
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        const __m256i m2 = _mm256_set1_epi8(3);
        const uint8_t * ql = x.ql + 64 * j;
        const __m256i bits1 = load256(ql);
        const __m256i bits2 = load256(ql + 32);
        const __m256i bitsh = load256(x.qh + 32 * j);
        q[0] = _mm256_or_si256(_mm256_and_si256(bits1, m4), _mm256_slli_epi16(_mm256_and_si256(bitsh, m2), 4));
        q[1] = _mm256_or_si256(_mm256_and_si256(bits2, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bitsh, 2), m2), 4));
        q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(bits1, 4), m4),
                               _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bitsh, 4), m2), 4));
        q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(bits2, 4), m4),
                               _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(bitsh, 6), m2), 4));
        // The 8 scales of this half in both 128-bit lanes (the permute needs an immediate).
        const __m256i dup = j == 0 ? _mm256_permute2x128_si256(all_scales, all_scales, 0x00)
                                   : _mm256_permute2x128_si256(all_scales, all_scales, 0x11);
        for (int k = 0; k < 4; ++k) sc[k] = pair_i16(dup, k);
    }
};

inline __m256i q6_K_all_scales(const block_q6_K & x) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x.scales)));
}

// A q6_K super-block as the tile reads it: all 16 scales as int16 lanes, d, and half(j). Two
// sources: q6_K_raw unpacks each half when it is asked for (one token: only one half's 8
// registers live at a time; the whole block at once spilled on AVX2, 9.6-10.3 -> 10.7-10.9 µs
// per vec_dot), q6_K_unpacked holds both, unpacked once for all of a task's tokens.
struct q6_K_raw {
    const block_q6_K & x;
    __m256i all_scales;
    float d;

    explicit q6_K_raw(const block_q6_K & b) : x(b), all_scales(q6_K_all_scales(b)), d(fp16(b.d)) {}
    q6_K_half half(int j) const { return q6_K_half(x, all_scales, j); }
};

struct q6_K_unpacked {
    q6_K_half halves[2];
    __m256i all_scales;
    float d;

    q6_K_unpacked() = default;
    explicit q6_K_unpacked(const block_q6_K & x) : all_scales(q6_K_all_scales(x)), d(fp16(x.d)) {
        for (int j = 0; j < 2; ++j) halves[j] = q6_K_half(x, all_scales, j);
    }
    const q6_K_half & half(int j) const { return halves[j]; }
};

// T tokens against the super-blocks block(0..nb): block(i) gives super-block i as q6_K_raw or
// q6_K_unpacked.
template <class M, int T, bool Batch, class Blocks>
void q6_K_tile(int64_t nb, Blocks && block, const uint8_t * a, size_t a_stride, float * out, int64_t out_stride) {
    __m256 acc[T];
    float acc_batch[T];
    for (int t = 0; t < T; ++t) {
        acc[t] = _mm256_setzero_ps();
        acc_batch[t] = 0.0f;
    }
    // One token alone sums each half in its own chain (integers: any order), so the block does
    // not wait on eight multiply-adds in a row; with more tokens their chains interleave already.
    constexpr int C = T == 1 ? 2 : 1;
    for (int64_t i = 0; i < nb; ++i) {
        const auto & x = block(i);
        const block_q8_K * y[T];
        __m256i sumi[T][C];
        for (int t = 0; t < T; ++t) {
            y[t] = reinterpret_cast<const block_q8_K *>(a + t * a_stride) + i;
            // The -32 offset of every quant, taken out once: -32 * sum_s scale_s * bsum_s.
            const __m256i offs = _mm256_madd_epi16(x.all_scales, load256(y[t]->bsums));
            sumi[t][0] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offs, 5));
            if constexpr (C == 2) sumi[t][1] = _mm256_setzero_si256();
        }
        for (int j = 0; j < 2; ++j) {
            const auto & h = x.half(j);
            for (int k = 0; k < 4; ++k)   // one register's quants and scales through every token
                for (int t = 0; t < T; ++t) {
                    const __m256i p = _mm256_maddubs_epi16(h.q[k], load256(y[t]->qs + 128 * j + 32 * k));   // q <= 63: fits int16
                    sumi[t][j % C] = M::madd_add(sumi[t][j % C], h.sc[k], p);
                }
        }
        for (int t = 0; t < T; ++t) {
            if constexpr (C == 2) sumi[t][0] = _mm256_add_epi32(sumi[t][0], sumi[t][1]);
            if constexpr (Batch)
                acc_batch[t] = std::fma(static_cast<float>(hsum_i32(sumi[t][0])) * x.d, y[t]->d, acc_batch[t]);
            else
                acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(y[t]->d * x.d), _mm256_cvtepi32_ps(sumi[t][0]), acc[t]);
        }
    }
    for (int t = 0; t < T; ++t) out[t * out_stride] = Batch ? acc_batch[t] : hsum(acc[t]);
}

// Rows one at a time, each row's super-blocks unpacked (U) once for all the task's tokens, which
// pass in groups of four; tile<T>(nb, row, a, a_stride, out, out_stride) multiplies one group.
// (Tokens outer, every row unpacked once per group: q4_K through matmul on one thread 98 -> 102,
// and 104-106 with hsum4_i32's unpacks; q6_K 112 -> 118, 116-122 with its tokens inner.)
template <class B, class U, class Tile>
void k_tiles(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
             int64_t n_tokens, float * out, int64_t out_stride, Tile && tile) {
    const auto * ab = static_cast<const uint8_t *>(a);
    const int64_t nb = n / k_qk_k;
    thread_local std::vector<U> row;
    if (row.size() < static_cast<size_t>(nb)) row.resize(static_cast<size_t>(nb));
    for (int64_t r = 0; r < n_rows; ++r) {
        const auto * x = reinterpret_cast<const B *>(static_cast<const uint8_t *>(w) + r * w_stride);
        for (int64_t i = 0; i < nb; ++i) row[i] = U(x[i]);
        for_token_tiles(n_tokens, [&]<int T>(int64_t t) {
            tile.template operator()<T>(nb, row.data(), ab + t * a_stride, a_stride, out + t * out_stride + r, out_stride);
        });
    }
}

// Tiles are batches (matmul takes them for two or more tokens): llama.cpp's batch orders.
template <class M>
struct k_kernels {
    static float vec_dot_q4_K(int64_t n, const void * w, const void * a) {
        return q4_K_one_token<M>(n, static_cast<const block_q4_K *>(w), static_cast<const block_q8_K *>(a));
    }
    static float vec_dot_q6_K(int64_t n, const void * w, const void * a) {
        float out;
        const auto * x = static_cast<const block_q6_K *>(w);
        q6_K_tile<M, 1, false>(n / k_qk_k, [x](int64_t i) { return q6_K_raw(x[i]); }, static_cast<const uint8_t *>(a), 0, &out, 1);
        return out;
    }
    static void tile_q4_K(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                          int64_t n_tokens, float * out, int64_t out_stride) {
        k_tiles<block_q4_K, q4_K_unpacked>(n, w, w_stride, n_rows, a, a_stride, n_tokens, out, out_stride,
                                           []<int T>(int64_t nb, const q4_K_unpacked * x, const uint8_t * y, size_t ys, float * o,
                                                     int64_t os) { q4_K_batch_tile<M, T>(nb, x, y, ys, o, os); });
    }
    static void tile_q6_K(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                          int64_t n_tokens, float * out, int64_t out_stride) {
        k_tiles<block_q6_K, q6_K_unpacked>(
            n, w, w_stride, n_rows, a, a_stride, n_tokens, out, out_stride,
            []<int T>(int64_t nb, const q6_K_unpacked * x, const uint8_t * y, size_t ys, float * o, int64_t os) {
                q6_K_tile<M, T, true>(nb, [x](int64_t i) -> const q6_K_unpacked & { return x[i]; }, y, ys, o, os);
            });
    }
};

}  // namespace
}  // namespace hearth::kernels::cpu::avx2
