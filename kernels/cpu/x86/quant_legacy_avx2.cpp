// AVX2 dot products for the 32-element block types against q8_0 / q8_1 activations.
// Numerics: each block's integer dot product is exact (as in the scalar reference); the block
// scale product is applied with FMA into 8 f32 lanes and the lanes are summed at the end, so the
// result differs from the scalar reference only by f32 rounding of the per-block accumulation.
#include "kernels/blocks.h"
#include "kernels/cpu/quant_variants.h"
#include "kernels/cpu/x86/avx2_util.h"
#include "kernels/cpu/x86/quant_avx2.h"
#include "kernels/cpu/x86/quant_q8_0_tiles.h"
#include "kernels/cpu/x86/quant_unsigned.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

// |x| * (y with x's sign) summed by 4 into int32 lanes: a u8 x i8 product that maddubs takes.
struct maddubs_dot {
    static __m256i dot(__m256i ax, __m256i sy) {
        return _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sy), _mm256_set1_epi16(1));
    }
};

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

// start + the lane sums of unsigned x times signed y (no pair reaches the int16 limit: x <= 31).
struct maddubs_dot_from {
    static __m256i dot(__m256i start, __m256i ux, __m256i sy) {
        return _mm256_add_epi32(start, _mm256_madd_epi16(_mm256_maddubs_epi16(ux, sy), _mm256_set1_epi16(1)));
    }
};

// q5_0's weights unsigned for quant_unsigned.h.
struct q5_0_unsigned {
    using block = block_q5_0;
    static constexpr char offset = 16;
    static constexpr int matvec_prefetch = k_nibble_matvec_prefetch;
    static __m256i load(const block & b) {
        const __m256i hi = _mm256_and_si256(bytes_from_bits(b.qh), _mm256_set1_epi8(0x10));
        return _mm256_or_si256(bytes_from_nibbles(b.qs), hi);
    }
};

// Prefill tiles of 4 weight rows x 3 tokens in AVX2's 16 registers (q5_0 through matmul, one
// thread, this path on a Zen 4: 4 x 3 95 GFLOP/s, 3 x 4 92-93, 2 x 5 84, 2 x 4 81-87).
constexpr int k_tile_rows = 4;
constexpr int k_tile_tokens = 3;

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

float vec_dot_q4_0(int64_t n, const void * w, const void * a) { return unsigned_row<q4_0_unsigned, maddubs_dot_from>(n, w, a); }
float vec_dot_q5_0(int64_t n, const void * w, const void * a) { return unsigned_row<q5_0_unsigned, maddubs_dot_from>(n, w, a); }
float vec_dot_q8_0(int64_t n, const void * w, const void * a) { return dot_q8_0_row<q8_0_load, maddubs_dot>(n, w, a); }
float vec_dot_iq4_nl(int64_t n, const void * w, const void * a) { return dot_q8_0_row<iq4_nl_load, maddubs_dot>(n, w, a); }

void vec_dot_rows_q4_0(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    unsigned_rows<q4_0_unsigned, maddubs_dot_from>(n, w, stride, a, out, n_rows);
}
void vec_dot_tile_q4_0(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                      int64_t n_tokens, float * out, int64_t out_stride) {
    unsigned_tiles<q4_0_unsigned, maddubs_dot_from, k_tile_rows, k_tile_tokens>(n, w, w_stride, n_rows, a, a_stride, n_tokens, out, out_stride);
}
void vec_dot_rows_q5_0(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    unsigned_rows<q5_0_unsigned, maddubs_dot_from>(n, w, stride, a, out, n_rows);
}
void vec_dot_tile_q5_0(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                      int64_t n_tokens, float * out, int64_t out_stride) {
    unsigned_tiles<q5_0_unsigned, maddubs_dot_from, k_tile_rows, k_tile_tokens>(n, w, w_stride, n_rows, a, a_stride, n_tokens, out, out_stride);
}
void vec_dot_rows_q8_0(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    dot_q8_0_multi<q8_0_load, maddubs_dot>(n, w, stride, a, out, n_rows);
}
void vec_dot_tile_q8_0(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                      int64_t n_tokens, float * out, int64_t out_stride) {
    dot_q8_0_tiles<q8_0_load, maddubs_dot>(n, w, w_stride, n_rows, a, a_stride, n_tokens, out, out_stride);
}
void vec_dot_rows_iq4_nl(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    dot_q8_0_multi<iq4_nl_load, maddubs_dot>(n, w, stride, a, out, n_rows);
}
void vec_dot_tile_iq4_nl(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                      int64_t n_tokens, float * out, int64_t out_stride) {
    dot_q8_0_tiles<iq4_nl_load, maddubs_dot>(n, w, w_stride, n_rows, a, a_stride, n_tokens, out, out_stride);
}

}  // namespace hearth::kernels::cpu::avx2
