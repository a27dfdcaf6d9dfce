// The q4_K prefill tile by row lanes, in 512-bit registers: sixteen weight rows are repacked so
// that int32 lane r of a register holds four consecutive quants of row r, and each vpdpbusd
// multiplies them by four quants of one token broadcast to every lane. A row's sums stay in its
// lane: no reduction across lanes, and one vpmulld applies sixteen rows' sub-block scales (the
// sub-block lanes of quant_q4_K_sublanes.h reduce across lanes for every token and pair).
// The rows are repacked once per task into a thread_local buffer (about 5 KiB per super-block
// of sixteen rows, in L1/L2), not kept: the mapped weights stay as they are and shared, and a
// load does nothing new. Per (row, token) the integers I_j, M_j and the f32 steps are
// q4_K_batch_tile's (quant_ktiles.h: llama.cpp's batch order), so bit-identical to it and to
// the sub-block lanes (tested); rows past the last group of sixteen go through those.
// Needs AVX-512F beside VNNI; included only by *_avx512.cpp files.
// Internal linkage (anonymous namespace), as quant_ktiles.h.
// Thread-safety: pure functions, plus thread_local scratch.
#pragma once

#include "kernels/cpu/x86/quant_q4_K_sublanes.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

constexpr int k_row_group = 16;

// Sixteen rows' super-block i: lo[j][s] lane r = row r's quants [64 j + 4 s, + 4) (sub-block
// 2 j), hi[j][s] the same of sub-block 2 j + 1 (elements 64 j + 32 + 4 s...), as unsigned bytes;
// sc[k] lane r = row r's scale of sub-block k; mins[j] lane r = row r's mins of sub-blocks 2 j
// and 2 j + 1 as two int16; d, dmin lane r = row r's.
struct alignas(64) q4_K_x16 {
    __m512i lo[4][8], hi[4][8];
    __m512i sc[8];
    __m512i mins[4];
    __m512 d, dmin;
};

// Rows w[0..16) (stride w_stride) super-block i into out.
inline void repack_q4_K_x16(const uint8_t * w, size_t w_stride, int64_t i, q4_K_x16 & out) {
    alignas(64) uint32_t q[4][8][k_row_group];
    alignas(64) int32_t sc[8][k_row_group];
    alignas(64) uint32_t mins[4][k_row_group];
    alignas(64) float d[k_row_group], dmin[k_row_group];
    for (int r = 0; r < k_row_group; ++r) {
        const block_q4_K & b = reinterpret_cast<const block_q4_K *>(w + r * w_stride)[i];
        for (int j = 0; j < 4; ++j)
            for (int s = 0; s < 8; ++s) std::memcpy(&q[j][s][r], b.qs + 32 * j + 4 * s, 4);
        alignas(16) uint8_t sm[16];   // 8 scales, 8 mins
        _mm_store_si128(reinterpret_cast<__m128i *>(sm), k4_scales_mins(b.scales));
        for (int k = 0; k < 8; ++k) sc[k][r] = sm[k];
        for (int j = 0; j < 4; ++j) mins[j][r] = static_cast<uint32_t>(sm[8 + 2 * j]) | static_cast<uint32_t>(sm[9 + 2 * j]) << 16;
        d[r] = fp16(b.d);
        dmin[r] = fp16(b.dmin);
    }
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    for (int j = 0; j < 4; ++j)
        for (int s = 0; s < 8; ++s) {
            const __m512i bits = _mm512_load_si512(q[j][s]);
            out.lo[j][s] = _mm512_and_si512(bits, m4);
            out.hi[j][s] = _mm512_and_si512(_mm512_srli_epi16(bits, 4), m4);
        }
    for (int k = 0; k < 8; ++k) out.sc[k] = _mm512_load_si512(sc[k]);
    for (int j = 0; j < 4; ++j) out.mins[j] = _mm512_load_si512(mins[j]);
    out.d = _mm512_load_ps(d);
    out.dmin = _mm512_load_ps(dmin);
}

// A token's q8_K super-block i beside its sub-block bsums in pairs: word j = the int16 sums of
// sub-blocks 2 j and 2 j + 1 (each the sum of two 16-element bsums), for vpmaddwd with mins[j].
struct q8_K_pair_sums {
    uint32_t w[4];
    explicit q8_K_pair_sums(const block_q8_K & y) {
        for (int j = 0; j < 4; ++j) {
            const auto lo = static_cast<uint16_t>(y.bsums[4 * j] + y.bsums[4 * j + 1]);
            const auto hi = static_cast<uint16_t>(y.bsums[4 * j + 2] + y.bsums[4 * j + 3]);
            w[j] = static_cast<uint32_t>(lo) | static_cast<uint32_t>(hi) << 16;
        }
    }
};

inline __m512i broadcast_u32(const void * p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(static_cast<int32_t>(v));
}

// T <= 4 tokens against sixteen rows: out[t * out_stride + r] for r < 16. y[t]: token t's
// super-blocks; ps[t]: their pair sums.
template <int T>
void q4_K_x16_tile(int64_t nb, const q4_K_x16 * x, const block_q8_K * const * y, const q8_K_pair_sums * const * ps,
                   float * out, int64_t out_stride) {
    __m512 acc[T], acc_m[T];
    for (int t = 0; t < T; ++t) acc[t] = acc_m[t] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        const q4_K_x16 & w = x[i];
        __m512 dd[T], dd_m[T];
        for (int t = 0; t < T; ++t) {
            const __m512 d_a = _mm512_set1_ps(y[t][i].d);
            dd[t] = _mm512_mul_ps(w.d, d_a);
            dd_m[t] = _mm512_mul_ps(w.dmin, d_a);
        }
        for (int j = 0; j < 4; ++j) {
            __m512i c_lo[T], c_hi[T];
            for (int t = 0; t < T; ++t) c_lo[t] = c_hi[t] = _mm512_setzero_si512();
            for (int s = 0; s < 8; ++s)
                for (int t = 0; t < T; ++t) {
                    const int8_t * q = y[t][i].qs + 64 * j + 4 * s;
                    c_lo[t] = _mm512_dpbusd_epi32(c_lo[t], w.lo[j][s], broadcast_u32(q));
                    c_hi[t] = _mm512_dpbusd_epi32(c_hi[t], w.hi[j][s], broadcast_u32(q + 32));
                }
            for (int t = 0; t < T; ++t) {
                const __m512i isum = _mm512_add_epi32(_mm512_mullo_epi32(c_lo[t], w.sc[2 * j]), _mm512_mullo_epi32(c_hi[t], w.sc[2 * j + 1]));
                acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), dd[t], acc[t]);
                const __m512i msum = _mm512_madd_epi16(w.mins[j], _mm512_set1_epi32(static_cast<int32_t>(ps[t][i].w[j])));
                acc_m[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(msum), dd_m[t], acc_m[t]);
            }
        }
    }
    for (int t = 0; t < T; ++t) _mm512_storeu_ps(out + t * out_stride, _mm512_sub_ps(acc[t], acc_m[t]));
}

// The q4_K vec_dot_tile (kernels/cpu/dispatch.h): groups of sixteen rows by row lanes, the rest
// of the rows by sub-block lanes.
void q4_K_row_group_tiles(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                          int64_t n_tokens, float * out, int64_t out_stride) {
    const int64_t nb = n / k_qk_k;
    const int64_t n_groups = n_rows / k_row_group;
    const auto * wb = static_cast<const uint8_t *>(w);
    const auto * ab = static_cast<const uint8_t *>(a);
    if (n_groups > 0) {
        thread_local std::vector<q4_K_x16> rows;
        thread_local std::vector<q8_K_pair_sums> sums;
        if (rows.size() < static_cast<size_t>(nb)) rows.resize(static_cast<size_t>(nb));
        sums.clear();
        for (int64_t t = 0; t < n_tokens; ++t)
            for (int64_t i = 0; i < nb; ++i) sums.emplace_back(reinterpret_cast<const block_q8_K *>(ab + t * a_stride)[i]);
        for (int64_t g = 0; g < n_groups; ++g) {
            for (int64_t i = 0; i < nb; ++i) repack_q4_K_x16(wb + k_row_group * g * w_stride, w_stride, i, rows[i]);
            for_token_tiles<4>(n_tokens, [&]<int T>(int64_t t0) {
                const block_q8_K * y[T];
                const q8_K_pair_sums * ps[T];
                for (int t = 0; t < T; ++t) {
                    y[t] = reinterpret_cast<const block_q8_K *>(ab + (t0 + t) * a_stride);
                    ps[t] = sums.data() + (t0 + t) * nb;
                }
                q4_K_x16_tile<T>(nb, rows.data(), y, ps, out + t0 * out_stride + k_row_group * g, out_stride);
            });
        }
    }
    const int64_t r0 = n_groups * k_row_group;
    if (r0 < n_rows)
        sublane_tiles<block_q4_K, q4_K_sublanes, q8_K_sublanes, q4_K_by_sublanes>(n, wb + r0 * w_stride, w_stride, n_rows - r0, a, a_stride,
                                                                              n_tokens, out + r0, out_stride);
}

}  // namespace
}  // namespace hearth::kernels::cpu::avx2
