// AVX2 dot products of the plain float types (f32, f16, bf16): four 8-lane f32 FMA accumulators
// over 32 elements per step, then the tail in scalar f32 (like ggml's SIMD path; the scalar
// reference sums in double, the tests bound the difference).
#include "kernels/cpu/x86/avx2_util.h"
#include "kernels/cpu/x86/quant_avx2.h"
#include "kernels/fp16.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

struct f32_load {
    using elem = float;
    static __m256 load(const float * p) { return _mm256_loadu_ps(p); }
    static float one(float v) { return v; }
};
struct f16_load {
    using elem = uint16_t;
    static __m256 load(const uint16_t * p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))); }
    static float one(uint16_t v) { return fp16_to_fp32(v); }
};
struct bf16_load {
    using elem = uint16_t;
    static __m256 load(const uint16_t * p) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    }
    static float one(uint16_t v) { return bf16_to_fp32(v); }
};

template <class L>
float dot(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const typename L::elem *>(w);
    const auto * y = static_cast<const typename L::elem *>(a);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        for (int k = 0; k < 4; ++k) acc[k] = _mm256_fmadd_ps(L::load(x + i + 8 * k), L::load(y + i + 8 * k), acc[k]);
    }
    for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(L::load(x + i), L::load(y + i), acc[0]);
    float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; i < n; ++i) sum += L::one(x[i]) * L::one(y[i]);
    return sum;
}

}  // namespace

float vec_dot_f32(int64_t n, const void * w, const void * a) { return dot<f32_load>(n, w, a); }
float vec_dot_f16(int64_t n, const void * w, const void * a) { return dot<f16_load>(n, w, a); }
float vec_dot_bf16(int64_t n, const void * w, const void * a) { return dot<bf16_load>(n, w, a); }

}  // namespace hearth::kernels::cpu::avx2
