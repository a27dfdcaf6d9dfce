// The q4_K and q6_K prefill tiles by row lanes, in 512-bit registers: sixteen weight rows are
// repacked so that int32 lane r of a register holds four consecutive quants of row r, and each
// vpdpbusd multiplies them by four quants of one token broadcast to every lane. A row's sums stay
// in its lane: no reduction across lanes, and one vpmulld applies sixteen rows' sub-block scales
// (the sub-block lanes of quant_q4_K_sublanes.h / quant_q6_K_sublanes.h reduce across lanes for
// every token).
// The rows are repacked once per task into a thread_local buffer (about 5 KiB per super-block of
// sixteen rows, in L1/L2), not kept: the mapped weights stay as they are and shared, and a load
// does nothing new. Per (row, token) the integers and the f32 steps are the batch tiles'
// (quant_ktiles.h: llama.cpp's batch order), so bit-identical to them and to the sub-block lanes
// (tested); rows past the last group of sixteen go through the sub-block lanes.
// Needs AVX-512F beside VNNI; included only by *_avx512.cpp files.
// Internal linkage (anonymous namespace), as quant_ktiles.h.
// Thread-safety: pure functions, plus thread_local scratch.
#pragma once

#include <algorithm>

#include "kernels/cpu/x86/quant_q4_K_sublanes.h"
#include "kernels/cpu/x86/quant_q6_K_sublanes.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

constexpr int k_row_group = 16;

inline __m512i broadcast_u32(const void * p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(static_cast<int32_t>(v));
}

// q4_K, sixteen rows' super-block i: lo[j][s] lane r = row r's quants [64 j + 4 s, + 4)
// (sub-block 2 j), hi[j][s] those of sub-block 2 j + 1 (elements 64 j + 32 + 4 s...), as
// unsigned bytes; sc[k] lane r = row r's scale of sub-block k; mins_lo[j] lane r = row r's min
// of sub-block 2 j twice (int16), beside a token's two 16-element bsums of that sub-block, and
// mins_hi[j] the same for 2 j + 1; d, dmin lane r = row r's.
struct alignas(64) q4_K_x16 {
    __m512i lo[4][8], hi[4][8];
    __m512i sc[8];
    __m512i mins_lo[4], mins_hi[4];
    __m512 d, dmin;
};

struct q4_K_rows {
    using block = block_q4_K;
    using x16 = q4_K_x16;
    static constexpr auto rest = sublane_tiles<block_q4_K, q4_K_sublanes, q8_K_sublanes, q4_K_by_sublanes>;

    static void repack(const uint8_t * w, size_t w_stride, int64_t i, x16 & out) {
        alignas(64) uint32_t q[4][8][k_row_group];
        alignas(64) int32_t sc[8][k_row_group], mins[8][k_row_group];
        alignas(64) float d[k_row_group], dmin[k_row_group];
        for (int r = 0; r < k_row_group; ++r) {
            const block_q4_K & b = reinterpret_cast<const block_q4_K *>(w + r * w_stride)[i];
            for (int j = 0; j < 4; ++j)
                for (int s = 0; s < 8; ++s) std::memcpy(&q[j][s][r], b.qs + 32 * j + 4 * s, 4);
            alignas(16) uint8_t sm[16];   // 8 scales, 8 mins
            _mm_store_si128(reinterpret_cast<__m128i *>(sm), k4_scales_mins(b.scales));
            for (int k = 0; k < 8; ++k) {
                sc[k][r] = sm[k];
                mins[k][r] = sm[8 + k] * 0x10001;   // twice, as int16
            }
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
        for (int j = 0; j < 4; ++j) {
            out.mins_lo[j] = _mm512_load_si512(mins[2 * j]);
            out.mins_hi[j] = _mm512_load_si512(mins[2 * j + 1]);
        }
        out.d = _mm512_load_ps(d);
        out.dmin = _mm512_load_ps(dmin);
    }

    // Per pair j of sub-blocks: I_j = sc sum(q4 q8) + sc' sum(q4' q8') and M_j = m bsum + m'
    // bsum' (exact), acc = fma(float(I_j), d d_a, acc), acc_m = fma(float(M_j), dmin d_a, acc_m);
    // the result acc - acc_m. st[2 t], st[2 t + 1]: token t's acc and acc_m across calls.
    static constexpr int n_acc = 2;
    template <int T>
    static void tile(int64_t i0, int64_t i1, const x16 * x, const block_q8_K * const * y, __m512 * st) {
        __m512 acc[T], acc_m[T];
        for (int t = 0; t < T; ++t) {
            acc[t] = st[2 * t];
            acc_m[t] = st[2 * t + 1];
        }
        for (int64_t i = i0; i < i1; ++i) {
            const x16 & w = x[i];
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
                    const int16_t * bs = y[t][i].bsums + 4 * j;
                    const __m512i msum = _mm512_dpwssd_epi32(_mm512_madd_epi16(w.mins_lo[j], broadcast_u32(bs)), w.mins_hi[j], broadcast_u32(bs + 2));
                    acc_m[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(msum), dd_m[t], acc_m[t]);
                }
            }
        }
        for (int t = 0; t < T; ++t) {
            st[2 * t] = acc[t];
            st[2 * t + 1] = acc_m[t];
        }
    }
    static __m512 result(const __m512 * st) { return _mm512_sub_ps(st[0], st[1]); }
};

// q6_K, sixteen rows' super-block i: q[m][s] lane r = row r's unsigned 6-bit quants [16 m + 4 s,
// + 4) (sub-block m); sc[m] lane r = row r's scale of sub-block m; sc_pairs[p] lane r = its
// scales of sub-blocks 2 p and 2 p + 1 as two int16 (for the -32 offset); d lane r = row r's.
struct alignas(64) q6_K_x16 {
    __m512i q[16][4];
    __m512i sc[16];
    __m512i sc_pairs[8];
    __m512 d;
};

struct q6_K_rows {
    using block = block_q6_K;
    using x16 = q6_K_x16;
    static constexpr auto rest = sublane_tiles<block_q6_K, q6_K_sublanes, q8_K_sublanes16, q6_K_by_sublanes>;

    static void repack(const uint8_t * w, size_t w_stride, int64_t i, x16 & out) {
        alignas(64) uint32_t q[16][4][k_row_group];
        alignas(64) int32_t sc[16][k_row_group], sc_pairs[8][k_row_group];
        alignas(64) float d[k_row_group];
        for (int r = 0; r < k_row_group; ++r) {
            const block_q6_K & b = reinterpret_cast<const block_q6_K *>(w + r * w_stride)[i];
            const __m256i all_scales = q6_K_all_scales(b);
            for (int h = 0; h < 2; ++h) {
                const q6_K_half half(b, all_scales, h);
                alignas(32) uint8_t e[128];   // elements [128 h, 128 h + 128) in order
                for (int k = 0; k < 4; ++k) _mm256_store_si256(reinterpret_cast<__m256i *>(e + 32 * k), half.q[k]);
                for (int m = 0; m < 8; ++m)
                    for (int s = 0; s < 4; ++s) std::memcpy(&q[8 * h + m][s][r], e + 16 * m + 4 * s, 4);
            }
            for (int m = 0; m < 16; ++m) sc[m][r] = b.scales[m];
            for (int p = 0; p < 8; ++p)
                sc_pairs[p][r] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint16_t>(b.scales[2 * p])) |
                                                      static_cast<uint32_t>(static_cast<uint16_t>(b.scales[2 * p + 1])) << 16);
            d[r] = fp16(b.d);
        }
        for (int m = 0; m < 16; ++m) {
            for (int s = 0; s < 4; ++s) out.q[m][s] = _mm512_load_si512(q[m][s]);
            out.sc[m] = _mm512_load_si512(sc[m]);
        }
        for (int p = 0; p < 8; ++p) out.sc_pairs[p] = _mm512_load_si512(sc_pairs[p]);
        out.d = _mm512_load_ps(d);
    }

    // Per block: S = sum_m sc_m sum(q6 q8) - 32 sum_m sc_m bsum_m (exact), acc = fma(float(S) d,
    // d_a, acc). st[t]: token t's acc across calls.
    static constexpr int n_acc = 1;
    template <int T>
    static void tile(int64_t i0, int64_t i1, const x16 * x, const block_q8_K * const * y, __m512 * st) {
        __m512 acc[T];
        for (int t = 0; t < T; ++t) acc[t] = st[t];
        for (int64_t i = i0; i < i1; ++i) {
            const x16 & w = x[i];
            __m512i sum[T], offs[T];
            for (int t = 0; t < T; ++t) {
                sum[t] = offs[t] = _mm512_setzero_si512();
                for (int p = 0; p < 8; ++p) offs[t] = _mm512_dpwssd_epi32(offs[t], w.sc_pairs[p], broadcast_u32(y[t][i].bsums + 2 * p));
            }
            for (int m = 0; m < 16; ++m) {
                __m512i c[T];
                for (int t = 0; t < T; ++t) c[t] = _mm512_setzero_si512();
                for (int s = 0; s < 4; ++s)
                    for (int t = 0; t < T; ++t) c[t] = _mm512_dpbusd_epi32(c[t], w.q[m][s], broadcast_u32(y[t][i].qs + 16 * m + 4 * s));
                for (int t = 0; t < T; ++t) sum[t] = _mm512_add_epi32(sum[t], _mm512_mullo_epi32(c[t], w.sc[m]));
            }
            for (int t = 0; t < T; ++t) {
                const __m512i s = _mm512_sub_epi32(sum[t], _mm512_slli_epi32(offs[t], 5));
                acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s), w.d), _mm512_set1_ps(y[t][i].d), acc[t]);
            }
        }
        for (int t = 0; t < T; ++t) st[t] = acc[t];
    }
    static __m512 result(const __m512 * st) { return st[0]; }
};

// Super-blocks of one group's repacked rows that a pass of every token tile takes: as many as
// fit in 24 KiB, so they stay in L1 while the tokens pass (a whole row of 8960 columns, 170-200
// KiB, came from L2 for every four tokens); the f32 sums carry over between passes in memory,
// each (row, token) still in block order.
constexpr size_t k_row_group_pass_bytes = 24 * 1024;

struct f32x16 {   // an __m512 as a vector element (std::vector<__m512> drops its alignment attribute)
    __m512 v;
};

// A vec_dot_tile (kernels/cpu/dispatch.h) for K = q4_K_rows or q6_K_rows: groups of sixteen rows
// by row lanes, tokens four at a time; the rows after the last group by K::rest.
template <class K>
void row_group_tiles(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride, int64_t n_tokens,
                     float * out, int64_t out_stride) {
    const int64_t nb = n / k_qk_k;
    const int64_t n_groups = n_rows / k_row_group;
    const auto * wb = static_cast<const uint8_t *>(w);
    const auto * ab = static_cast<const uint8_t *>(a);
    if (n_groups > 0) {
        thread_local std::vector<typename K::x16> rows;
        thread_local std::vector<f32x16> st;
        if (rows.size() < static_cast<size_t>(nb)) rows.resize(static_cast<size_t>(nb));
        st.resize(static_cast<size_t>(K::n_acc * n_tokens));
        const int64_t pass = std::max<int64_t>(1, static_cast<int64_t>(k_row_group_pass_bytes / sizeof(typename K::x16)));
        for (int64_t g = 0; g < n_groups; ++g) {
            for (int64_t i = 0; i < nb; ++i) K::repack(wb + k_row_group * g * w_stride, w_stride, i, rows[i]);
            std::fill(st.begin(), st.end(), f32x16{_mm512_setzero_ps()});
            for (int64_t i0 = 0; i0 < nb; i0 += pass) {
                const int64_t i1 = std::min(nb, i0 + pass);
                for_token_tiles<4>(n_tokens, [&]<int T>(int64_t t0) {
                    const block_q8_K * y[T];
                    for (int t = 0; t < T; ++t) y[t] = reinterpret_cast<const block_q8_K *>(ab + (t0 + t) * a_stride);
                    K::template tile<T>(i0, i1, rows.data(), y, &st[static_cast<size_t>(K::n_acc * t0)].v);
                });
            }
            for (int64_t t = 0; t < n_tokens; ++t)
                _mm512_storeu_ps(out + t * out_stride + k_row_group * g, K::result(&st[static_cast<size_t>(K::n_acc * t)].v));
        }
    }
    const int64_t r0 = n_groups * k_row_group;
    if (r0 < n_rows) K::rest(n, wb + r0 * w_stride, w_stride, n_rows - r0, a, a_stride, n_tokens, out + r0, out_stride);
}

}  // namespace
}  // namespace hearth::kernels::cpu::avx2
