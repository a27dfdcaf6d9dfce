// vpmaddubsw + vpmaddwd + vpaddd chains; built with AVX2 flags (tests/bench/CMakeLists.txt).
#include <immintrin.h>

#include "tests/bench/int8_peak.h"

namespace hearth::bench {

int32_t int8_peak_avx2(int64_t n_iters) {
    static_assert(k_int8_peak_chains_avx2 == 4);
    const __m256i a = _mm256_set1_epi8(3), ones = _mm256_set1_epi16(1);
    // Named variables, not arrays: an array indexed in the loop stays in memory.
    __m256i b0 = _mm256_set1_epi8(-1), b1 = _mm256_set1_epi8(-2), b2 = _mm256_set1_epi8(-3), b3 = _mm256_set1_epi8(-4);
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    auto step = [&](__m256i & acc, __m256i & b) {
        // Opaque to the compiler (no instruction): otherwise the products leave the loop.
        asm volatile("" : "+x"(b));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones));
    };
    for (int64_t i = 0; i < n_iters; ++i) {
        step(s0, b0);
        step(s1, b1);
        step(s2, b2);
        step(s3, b3);
    }
    const __m256i s = _mm256_add_epi32(_mm256_add_epi32(s0, s1), _mm256_add_epi32(s2, s3));
    const __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    const __m128i h2 = _mm_hadd_epi32(h, h);
    return _mm_cvtsi128_si32(_mm_hadd_epi32(h2, h2));
}

}  // namespace hearth::bench
