// AVX-512 VNNI versions (256-bit, with AVX512BW/VL) of the block kernels against q8_0
// activations: vpdpbusd sums products by four into int32 lanes in one instruction where AVX2
// needs maddubs + madd; q4_0 and q5_0 weights enter it unsigned (no sign instructions), q5_0's
// fifth bits as one masked move instead of shuffle, or and compare. Same int32 lanes and the
// same float steps as the AVX2 kernels (quant_q8_0_tiles.h), so bit-identical to them (tested).
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni (kernels/CMakeLists.txt); used
// only where the CPU has all four (kernels/cpu/dispatch.cpp).
#include <cstring>
#include <vector>

#include "kernels/cpu/quant_variants.h"
#include "kernels/cpu/x86/quant_q8_0_tiles.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

struct vnni_dot {
    static __m256i dot(__m256i ax, __m256i sy) { return _mm256_dpbusd_epi32(_mm256_setzero_si256(), ax, sy); }
};

// Unsigned weights (q4_0: the nibble, 0..15; q5_0: nibble | fifth bit << 4, 0..31) go into
// vpdpbusd as they are, with the offset (8 or 16) taken off by starting each block's int32 lanes
// at -offset * (the four activations of the lane): the same lanes as the signed form, exactly, so
// bit-identical to it, without the two sign instructions per block and row.
struct q4_0_unsigned {
    using block = block_q4_0;
    static constexpr char offset = 8;
    static __m256i load(const block & b) { return bytes_from_nibbles(b.qs); }
};
struct q5_0_unsigned {
    using block = block_q5_0;
    static constexpr char offset = 16;
    static __m256i load(const block & b) {
        uint32_t qh;
        std::memcpy(&qh, b.qh, sizeof qh);
        const __m256i hi = _mm256_maskz_mov_epi8(static_cast<__mmask32>(qh), _mm256_set1_epi8(0x10));
        return _mm256_or_si256(bytes_from_nibbles(b.qs), hi);
    }
};

// -offset * (sum of each group of four activations), as int32 lanes.
template <class L>
__m256i offset_lanes(__m256i y) {
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(L::offset), _mm256_sub_epi8(_mm256_setzero_si256(), y));
}

// R weight rows against T activation rows, as dot_q8_0_tile (same float steps in the same order).
template <class L, int R, int T>
    requires(R <= 4)
void unsigned_tile(int64_t n, const uint8_t * w, size_t w_stride, const uint8_t * a, size_t a_stride, float * out,
                   int64_t out_stride) {
    using block = typename L::block;
    const int64_t nb = n / 32;
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        __m256i x[R];
        alignas(16) uint16_t dx_h[4] = {0, 0, 0, 0};
        for (int r = 0; r < R; ++r) {
            const block & b = reinterpret_cast<const block *>(w + r * w_stride)[i];
            x[r] = L::load(b);
            dx_h[r] = b.d;
        }
        // The R x T scale products, four at a time, through memory: each pair then takes its
        // product with a broadcast load (a load port) instead of a multiply and a shuffle.
        const __m128 dx = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(dx_h)));
        alignas(16) float prod[T][4];
        for (int t = 0; t < T; ++t) {
            const block_q8_0 & yb = reinterpret_cast<const block_q8_0 *>(a + t * a_stride)[i];
            _mm_store_ps(prod[t], _mm_mul_ps(dx, _mm_set1_ps(fp16(yb.d))));
        }
        for (int t = 0; t < T; ++t) {
            const block_q8_0 & yb = reinterpret_cast<const block_q8_0 *>(a + t * a_stride)[i];
            const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(yb.qs));
            const __m256i start = offset_lanes<L>(y);
            for (int r = 0; r < R; ++r) {
                const __m256i s = _mm256_dpbusd_epi32(start, x[r], y);
                acc[r][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&prod[t][r]), _mm256_cvtepi32_ps(s), acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) out[t * out_stride + r] = hsum(acc[r][t]);
}

// Matvec: how far ahead of the rows being read the prefetches reach (Zen 4: 2 KB too close,
// 4-8 KB alike).
constexpr size_t k_prefetch_ahead = 4096;

void prefetch_rows(const uint8_t * p, size_t stride, int n_rows, size_t row_bytes) {
    for (int r = 0; r < n_rows; ++r)
        for (size_t off = 0; off < row_bytes; off += 64) _mm_prefetch(reinterpret_cast<const char *>(p + r * stride + off), _MM_HINT_T0);
}

// Matvec: one activation row against many weight rows, so each block's offset lanes are worked
// out once for the call, not once per row. Two rows at a time (two accumulation chains instead
// of one waiting on its FMA latency), with the rows 4 KB on prefetched explicitly: two
// interleaved rows alone lose the hardware prefetchers (q5_0 from memory, one thread: 12.2 GB/s
// one row at a time, 6.5 two rows, 19.0 two rows with the prefetches).
template <class L>
void unsigned_rows(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    using block = typename L::block;
    const int64_t nb = n / 32;
    const auto * y = static_cast<const block_q8_0 *>(a);
    struct lanes {
        __m256i v;
    };
    thread_local std::vector<lanes> start;
    thread_local std::vector<float> dy;
    if (start.size() < static_cast<size_t>(nb)) {
        start.resize(static_cast<size_t>(nb));
        dy.resize(static_cast<size_t>(nb));
    }
    for (int64_t i = 0; i < nb; ++i) {
        start[i].v = offset_lanes<L>(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(y[i].qs)));
        dy[i] = fp16(y[i].d);
    }
    const size_t row_bytes = static_cast<size_t>(nb) * sizeof(block);
    int64_t r = 0;
    for (; r + 2 <= n_rows; r += 2) {
        const auto * x0 = reinterpret_cast<const block *>(static_cast<const uint8_t *>(w) + r * stride);
        const auto * x1 = reinterpret_cast<const block *>(static_cast<const uint8_t *>(w) + (r + 1) * stride);
        prefetch_rows(reinterpret_cast<const uint8_t *>(x0) + k_prefetch_ahead, stride, 2, row_bytes);
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
        for (int64_t i = 0; i < nb; ++i) {
            const __m256i yq = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(y[i].qs));
            const __m256i s0 = _mm256_dpbusd_epi32(start[i].v, L::load(x0[i]), yq);
            const __m256i s1 = _mm256_dpbusd_epi32(start[i].v, L::load(x1[i]), yq);
            acc0 = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x0[i].d) * dy[i]), _mm256_cvtepi32_ps(s0), acc0);
            acc1 = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x1[i].d) * dy[i]), _mm256_cvtepi32_ps(s1), acc1);
        }
        out[r] = hsum(acc0);
        out[r + 1] = hsum(acc1);
    }
    for (; r < n_rows; ++r) {
        const auto * x = reinterpret_cast<const block *>(static_cast<const uint8_t *>(w) + r * stride);
        prefetch_rows(reinterpret_cast<const uint8_t *>(x) + k_prefetch_ahead, stride, 1, row_bytes);
        __m256 acc = _mm256_setzero_ps();
        for (int64_t i = 0; i < nb; ++i) {
            const __m256i yq = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(y[i].qs));
            const __m256i s = _mm256_dpbusd_epi32(start[i].v, L::load(x[i]), yq);
            acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i].d) * dy[i]), _mm256_cvtepi32_ps(s), acc);
        }
        out[r] = hsum(acc);
    }
}

template <class L, int R>
void unsigned_tile_tokens(int64_t n, const uint8_t * w, size_t w_stride, const uint8_t * a, size_t a_stride,
                          int64_t n_tokens, float * out, int64_t out_stride) {
    int64_t t = 0;
    for (; t + 4 <= n_tokens; t += 4) unsigned_tile<L, R, 4>(n, w, w_stride, a + t * a_stride, a_stride, out + t * out_stride, out_stride);
    switch (n_tokens - t) {
    case 3: unsigned_tile<L, R, 3>(n, w, w_stride, a + t * a_stride, a_stride, out + t * out_stride, out_stride); break;
    case 2: unsigned_tile<L, R, 2>(n, w, w_stride, a + t * a_stride, a_stride, out + t * out_stride, out_stride); break;
    case 1: unsigned_tile<L, R, 1>(n, w, w_stride, a + t * a_stride, a_stride, out + t * out_stride, out_stride); break;
    default: break;
    }
}

template <class L>
void unsigned_tiles(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                    int64_t n_tokens, float * out, int64_t out_stride) {
    const auto * wb = static_cast<const uint8_t *>(w);
    const auto * ab = static_cast<const uint8_t *>(a);
    int64_t r = 0;
    for (; r + 4 <= n_rows; r += 4) unsigned_tile_tokens<L, 4>(n, wb + r * w_stride, w_stride, ab, a_stride, n_tokens, out + r, out_stride);
    for (; r < n_rows; ++r) unsigned_tile_tokens<L, 1>(n, wb + r * w_stride, w_stride, ab, a_stride, n_tokens, out + r, out_stride);
}

template <class L>
float unsigned_row(int64_t n, const void * w, const void * a) {
    float out;
    unsigned_tile<L, 1, 1>(n, static_cast<const uint8_t *>(w), 0, static_cast<const uint8_t *>(a), 0, &out, 1);
    return out;
}

template <class L>
float vnni_row(int64_t n, const void * w, const void * a) {
    return dot_q8_0_row<L, vnni_dot>(n, w, a);
}
template <class L>
void vnni_rows(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    dot_q8_0_multi<L, vnni_dot>(n, w, stride, a, out, n_rows);
}
template <class L>
void vnni_tiles(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride, int64_t n_tokens,
                float * out, int64_t out_stride) {
    dot_q8_0_tiles<L, vnni_dot>(n, w, w_stride, n_rows, a, a_stride, n_tokens, out, out_stride);
}

}  // namespace
}  // namespace hearth::kernels::cpu::avx2

namespace hearth::kernels::cpu {

void add_quant_kernels_avx512_vnni(quant_kernels & table) {
    using tt = tensor_type;
    using namespace avx2;
    set_vec_dot<unsigned_row<q4_0_unsigned>, unsigned_rows<q4_0_unsigned>, unsigned_tiles<q4_0_unsigned>>(table, tt::q4_0);
    set_vec_dot<unsigned_row<q5_0_unsigned>, unsigned_rows<q5_0_unsigned>, unsigned_tiles<q5_0_unsigned>>(table, tt::q5_0);
    set_vec_dot<vnni_row<q8_0_load>, vnni_rows<q8_0_load>, vnni_tiles<q8_0_load>>(table, tt::q8_0);
    set_vec_dot<vnni_row<iq4_nl_load>, vnni_rows<iq4_nl_load>, vnni_tiles<iq4_nl_load>>(table, tt::iq4_nl);
}

}  // namespace hearth::kernels::cpu
