// What the prefill tiles by sub-block lanes (quant_q4_K_sublanes.h, quant_q6_K_sublanes.h) share:
// the 8 x 8 transpose of int32 lanes and the tile entry, which converts every token's q8_K
// super-blocks once per call, in groups of eight tokens (group g's block i of token t at
// 8 * (g * nb + i) + t, so a tile's tokens are one sequential stream), then takes the rows one at
// a time (each row's super-blocks unpacked once for all tokens) against the groups.
// Internal linkage (anonymous namespace), as quant_ktiles.h.
// Thread-safety: pure functions, plus thread_local scratch in sublane_tiles.
#pragma once

#include <vector>

#include "kernels/cpu/x86/quant_ktiles.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

// The 8 x 8 transpose of int32 lanes: v[r] lane l -> v[l] lane r.
inline void transpose8_i32(__m256i v[8]) {
    __m256i t[8], u[8];
    for (int k = 0; k < 4; ++k) {
        t[2 * k] = _mm256_unpacklo_epi32(v[2 * k], v[2 * k + 1]);
        t[2 * k + 1] = _mm256_unpackhi_epi32(v[2 * k], v[2 * k + 1]);
    }
    for (int k = 0; k < 2; ++k) {
        u[4 * k] = _mm256_unpacklo_epi64(t[4 * k], t[4 * k + 2]);
        u[4 * k + 1] = _mm256_unpackhi_epi64(t[4 * k], t[4 * k + 2]);
        u[4 * k + 2] = _mm256_unpacklo_epi64(t[4 * k + 1], t[4 * k + 3]);
        u[4 * k + 3] = _mm256_unpackhi_epi64(t[4 * k + 1], t[4 * k + 3]);
    }
    for (int k = 0; k < 4; ++k) {
        v[k] = _mm256_permute2x128_si256(u[k], u[k + 4], 0x20);
        v[k + 4] = _mm256_permute2x128_si256(u[k], u[k + 4], 0x31);
    }
}

// A q8_K super-block with its quants rearranged by Arrange(y.qs, q) into a weight kernel's
// lanes, and its bsums and scale.
template <void (*Arrange)(const int8_t * qs, __m256i q[8])>
struct q8_K_lanes {
    __m256i q[8];
    __m256i bsums;
    float d;

    q8_K_lanes() = default;
    explicit q8_K_lanes(const block_q8_K & y) : bsums(load256(y.bsums)), d(y.d) { Arrange(y.qs, q); }
};

// B: the weight block type; U: its unpacked form (constructible from a B); A: the converted
// activation block (from a block_q8_K); K::tile<T>(nb, row, acts, out, out_stride) multiplies
// one unpacked row by T <= 8 tokens of a group. The signature of a vec_dot_tile
// (kernels/cpu/dispatch.h).
template <class B, class U, class A, class K>
void sublane_tiles(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                   int64_t n_tokens, float * out, int64_t out_stride) {
    const auto * ab = static_cast<const uint8_t *>(a);
    const int64_t nb = n / k_qk_k;
    const int64_t n_groups = (n_tokens + 7) / 8;
    thread_local std::vector<A> acts;
    thread_local std::vector<U> row;
    if (acts.size() < static_cast<size_t>(n_groups * nb * 8)) acts.resize(static_cast<size_t>(n_groups * nb * 8));
    if (row.size() < static_cast<size_t>(nb)) row.resize(static_cast<size_t>(nb));
    for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t i = 0; i < nb; ++i)
            acts[8 * ((t / 8) * nb + i) + t % 8] = A(reinterpret_cast<const block_q8_K *>(ab + t * a_stride)[i]);
    for (int64_t r = 0; r < n_rows; ++r) {
        const auto * x = reinterpret_cast<const B *>(static_cast<const uint8_t *>(w) + r * w_stride);
        for (int64_t i = 0; i < nb; ++i) row[i] = U(x[i]);
        for_token_tiles<8>(n_tokens, [&]<int T>(int64_t t) {
            K::template tile<T>(nb, row.data(), acts.data() + 8 * (t / 8) * nb, out + t * out_stride + r, out_stride);
        });
    }
}

}  // namespace
}  // namespace hearth::kernels::cpu::avx2
