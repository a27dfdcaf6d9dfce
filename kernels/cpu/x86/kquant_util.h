// Small AVX2 helpers of the K-quant kernels (quant_kquants_avx2.cpp, quant_ktiles.h): scale
// broadcasts and the 6-bit scale unpacking of q4_K / q5_K. Internal linkage, as avx2_util.h.
// Thread-safety: pure functions.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace hearth::kernels::cpu::avx2 {
namespace {

inline __m256i load256(const void * p) { return _mm256_loadu_si256(static_cast<const __m256i *>(p)); }

// Broadcast of 16-bit lane k (of a 128-bit half duplicated in both halves) to all 16 lanes.
inline __m256i broadcast_i16(__m256i dup, int k) {
    const auto lo = static_cast<char>(2 * k), hi = static_cast<char>(2 * k + 1);
    return _mm256_shuffle_epi8(dup, _mm256_setr_epi8(lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi,
                                                     lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi));
}

// Low half lane 2k, high half lane 2k + 1: the scales of the two 16-element sub-blocks one
// 32-byte register of quants covers (dup holds the same 8 lanes in both halves).
inline __m256i pair_i16(__m256i dup, int k) {
    const auto a = static_cast<char>(4 * k), b = static_cast<char>(4 * k + 1);
    const auto c = static_cast<char>(4 * k + 2), d = static_cast<char>(4 * k + 3);
    return _mm256_shuffle_epi8(dup, _mm256_setr_epi8(a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b,
                                                     c, d, c, d, c, d, c, d, c, d, c, d, c, d, c, d));
}

// The 8 scales (bytes 0..7) and 8 mins (bytes 8..15) of a q4_K / q5_K block, 6 bits each.
inline __m128i k4_scales_mins(const uint8_t * packed) {
    uint32_t u[4];
    std::memcpy(u, packed, 12);
    constexpr uint32_t m6 = 0x3f3f3f3f, m4 = 0x0f0f0f0f, m2 = 0x03030303;
    u[3] = ((u[2] >> 4) & m4) | (((u[1] >> 6) & m2) << 4);
    const uint32_t mins_lo = u[1] & m6;
    u[1] = (u[2] & m4) | (((u[0] >> 6) & m2) << 4);
    u[2] = mins_lo;
    u[0] &= m6;
    return _mm_set_epi32(static_cast<int>(u[3]), static_cast<int>(u[2]), static_cast<int>(u[1]), static_cast<int>(u[0]));
}

}  // namespace
}  // namespace hearth::kernels::cpu::avx2
