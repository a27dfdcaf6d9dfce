// AVX2 q4_K and q6_K dot products (quant_ktiles.h) with madd + add.
#include "kernels/cpu/x86/quant_avx2.h"
#include "kernels/cpu/x86/quant_ktiles.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

struct madd_avx2 {
    static __m256i madd_add(__m256i acc, __m256i scales, __m256i pairs) {
        return _mm256_add_epi32(acc, _mm256_madd_epi16(scales, pairs));
    }
};
using kernels_avx2 = k_kernels<madd_avx2>;

}  // namespace

float vec_dot_q4_K(int64_t n, const void * w, const void * a) { return kernels_avx2::vec_dot_q4_K(n, w, a); }

float vec_dot_q6_K(int64_t n, const void * w, const void * a) { return kernels_avx2::vec_dot_q6_K(n, w, a); }

void vec_dot_tile_q4_K(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                       int64_t n_tokens, float * out, int64_t out_stride) {
    kernels_avx2::tile_q4_K(n, w, w_stride, n_rows, a, a_stride, n_tokens, out, out_stride);
}

void vec_dot_tile_q6_K(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                       int64_t n_tokens, float * out, int64_t out_stride) {
    kernels_avx2::tile_q6_K(n, w, w_stride, n_rows, a, a_stride, n_tokens, out, out_stride);
}

}  // namespace hearth::kernels::cpu::avx2
