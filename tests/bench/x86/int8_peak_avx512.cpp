// vpdpbusd zmm chains; built with AVX-512 VNNI flags (tests/bench/CMakeLists.txt).
#include <immintrin.h>

#include "tests/bench/int8_peak.h"

namespace hearth::bench {

int32_t int8_peak_avx512_vnni(int64_t n_iters) {
    __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
    __m512i acc[k_int8_peak_chains_avx512];
    for (auto & r : acc) r = _mm512_setzero_si512();
    for (int64_t i = 0; i < n_iters; ++i) {
        // Opaque to the compiler (no instruction): it cannot prove the operands constant.
        asm volatile("" : "+v"(a), "+v"(b));
        for (auto & r : acc) r = _mm512_dpbusd_epi32(r, a, b);
    }
    __m512i s = acc[0];
    for (int64_t j = 1; j < k_int8_peak_chains_avx512; ++j) s = _mm512_add_epi32(s, acc[j]);
    alignas(64) int32_t lanes[16];
    _mm512_store_si512(lanes, s);
    int32_t sum = 0;
    for (int32_t v : lanes) sum += v;
    return sum;
}

}  // namespace hearth::bench
