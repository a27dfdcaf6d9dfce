// AVX2 dot products for the 32-element block types against q8_0 / q8_1 activations.
// Numerics: each block's integer dot product is exact (as in the scalar reference); the block
// scale product is applied with FMA into 8 f32 lanes and the lanes are summed at the end, so the
// result differs from the scalar reference only by f32 rounding of the per-block accumulation.
#include "kernels/blocks.h"
#include "kernels/cpu/quant_variants.h"
#include "kernels/cpu/x86/avx2_util.h"
#include "kernels/cpu/x86/quant_avx2.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

// Loads the 32 signed weights of one block as bytes.
struct q4_0_load {
    using block = block_q4_0;
    static __m256i load(const block & b) { return _mm256_sub_epi8(bytes_from_nibbles(b.qs), _mm256_set1_epi8(8)); }
};
struct q5_0_load {
    using block = block_q5_0;
    static __m256i load(const block & b) {
        // nibble | 0xF0 where the fifth bit is clear: as int8 that is nibble - 16, else nibble.
        const __m256i hi = _mm256_andnot_si256(bytes_from_bits(b.qh), _mm256_set1_epi8(static_cast<char>(0xF0)));
        return _mm256_or_si256(bytes_from_nibbles(b.qs), hi);
    }
};
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

// R weight rows against one q8_0 row. Each row keeps two accumulators (even and odd blocks,
// which hides the FMA latency) and sees exactly the operations of the one-row case, so every
// R gives bit-identical results; R > 1 shares the activation loads and scale conversions.
template <class L, int R>
void dot_q8_0_rows(int64_t n, const uint8_t * w, size_t stride, const block_q8_0 * y, float * out) {
    using block = typename L::block;
    const int64_t nb = n / 32;
    __m256 acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 1 < nb; i += 2) {
        const float dy0 = fp16(y[i].d), dy1 = fp16(y[i + 1].d);
        const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(y[i].qs));
        const __m256i y1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(y[i + 1].qs));
        for (int r = 0; r < R; ++r) {
            const auto * x = reinterpret_cast<const block *>(w + r * stride);
            const __m256 d0 = _mm256_set1_ps(fp16(x[i].d) * dy0);
            const __m256 d1 = _mm256_set1_ps(fp16(x[i + 1].d) * dy1);
            acc0[r] = _mm256_fmadd_ps(d0, _mm256_cvtepi32_ps(dot_i8_i32(L::load(x[i]), y0)), acc0[r]);
            acc1[r] = _mm256_fmadd_ps(d1, _mm256_cvtepi32_ps(dot_i8_i32(L::load(x[i + 1]), y1)), acc1[r]);
        }
    }
    if (i < nb) {
        const float dy0 = fp16(y[i].d);
        const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(y[i].qs));
        for (int r = 0; r < R; ++r) {
            const auto * x = reinterpret_cast<const block *>(w + r * stride);
            const __m256 d0 = _mm256_set1_ps(fp16(x[i].d) * dy0);
            acc0[r] = _mm256_fmadd_ps(d0, _mm256_cvtepi32_ps(dot_i8_i32(L::load(x[i]), y0)), acc0[r]);
        }
    }
    for (int r = 0; r < R; ++r) out[r] = hsum(_mm256_add_ps(acc0[r], acc1[r]));
}

template <class L>
float dot_q8_0_row(int64_t n, const void * w, const void * a) {
    float out;
    dot_q8_0_rows<L, 1>(n, static_cast<const uint8_t *>(w), 0, static_cast<const block_q8_0 *>(a), &out);
    return out;
}

template <class L>
void dot_q8_0_multi(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    const auto * wb = static_cast<const uint8_t *>(w);
    const auto * y = static_cast<const block_q8_0 *>(a);
    int64_t r = 0;
    for (; r + 4 <= n_rows; r += 4) dot_q8_0_rows<L, 4>(n, wb + r * stride, stride, y, out + r);
    for (; r < n_rows; ++r) dot_q8_0_rows<L, 1>(n, wb + r * stride, stride, y, out + r);
}

// One weight row with min (q4_1 / q5_1: unsigned quants) against one q8_1 row:
// sum = sum_blocks d_w d_a sum(q_w q_a) + m_w s_a, the second term in plain f32 as in the reference.
template <class L>
float dot_q8_1_row(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const typename L::block *>(w);
    const auto * y = static_cast<const block_q8_1 *>(a);
    __m256 acc = _mm256_setzero_ps();
    float summs = 0.0f;
    for (int64_t i = 0; i < n / 32; ++i) {
        summs += fp16(x[i].m) * fp16(y[i].s);
        const __m256 d = _mm256_set1_ps(fp16(x[i].d) * fp16(y[i].d));
        const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(y[i].qs));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(dot_u8_i8_i32(L::load(x[i]), qy)), acc);
    }
    return hsum(acc) + summs;
}

struct q4_1_load {
    using block = block_q4_1;
    static __m256i load(const block & b) { return bytes_from_nibbles(b.qs); }
};
struct q5_1_load {
    using block = block_q5_1;
    static __m256i load(const block & b) {
        const __m256i hi = _mm256_and_si256(bytes_from_bits(b.qh), _mm256_set1_epi8(0x10));
        return _mm256_or_si256(bytes_from_nibbles(b.qs), hi);
    }
};

}  // namespace

float vec_dot_q4_1(int64_t n, const void * w, const void * a) { return dot_q8_1_row<q4_1_load>(n, w, a); }
float vec_dot_q5_1(int64_t n, const void * w, const void * a) { return dot_q8_1_row<q5_1_load>(n, w, a); }

float vec_dot_q4_0(int64_t n, const void * w, const void * a) { return dot_q8_0_row<q4_0_load>(n, w, a); }
float vec_dot_q5_0(int64_t n, const void * w, const void * a) { return dot_q8_0_row<q5_0_load>(n, w, a); }
float vec_dot_q8_0(int64_t n, const void * w, const void * a) { return dot_q8_0_row<q8_0_load>(n, w, a); }
float vec_dot_iq4_nl(int64_t n, const void * w, const void * a) { return dot_q8_0_row<iq4_nl_load>(n, w, a); }

void vec_dot_rows_q4_0(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    dot_q8_0_multi<q4_0_load>(n, w, stride, a, out, n_rows);
}
void vec_dot_rows_q5_0(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    dot_q8_0_multi<q5_0_load>(n, w, stride, a, out, n_rows);
}
void vec_dot_rows_q8_0(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    dot_q8_0_multi<q8_0_load>(n, w, stride, a, out, n_rows);
}
void vec_dot_rows_iq4_nl(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    dot_q8_0_multi<iq4_nl_load>(n, w, stride, a, out, n_rows);
}

}  // namespace hearth::kernels::cpu::avx2
