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

// Byte k of a 128-bit half (the same 16 bytes in both halves) as 16 unsigned 16-bit lanes.
inline __m256i broadcast_u8_i16(__m256i dup, int k) {
    const auto c = static_cast<char>(k), z = static_cast<char>(0x80);   // 0x80: a zero byte
    return _mm256_shuffle_epi8(dup, _mm256_setr_epi8(c, z, c, z, c, z, c, z, c, z, c, z, c, z, c, z,
                                                     c, z, c, z, c, z, c, z, c, z, c, z, c, z, c, z));
}

// The 8 scales (bytes 0..7) and 8 mins (bytes 8..15) of a q4_K / q5_K block, 6 bits each, the
// same 16 bytes in both 128-bit halves: ggml's get_scale_min_k4 for all 16 at once, in vector
// steps (scalar shifts and masks took some twenty instructions and four inserts per block).
// Reads 16 bytes at packed: the 12 scale bytes and the 4 that follow them in the block.
inline __m256i k4_scales_mins_dup(const uint8_t * packed) {
    const __m256i q = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(packed)));
    // Output byte i: its low bits from q[a_i]; bytes 4-7 and 12-15 their top two bits from q[b_i].
    const __m256i a = _mm256_shuffle_epi8(q, _mm256_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11,
                                                              0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    constexpr char z = static_cast<char>(0x80);
    const __m256i b = _mm256_shuffle_epi8(q, _mm256_setr_epi8(z, z, z, z, 0, 1, 2, 3, z, z, z, z, 4, 5, 6, 7,
                                                              z, z, z, z, 0, 1, 2, 3, z, z, z, z, 4, 5, 6, 7));
    // scales 0-3 and mins 0-3: 6 bits; scales 4-7: the low nibble; mins 4-7: the high nibble.
    const __m256i low = _mm256_and_si256(a, _mm256_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0,
                                                             63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0));
    const __m256i high_nibble = _mm256_and_si256(_mm256_srli_epi16(a, 4), _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15,
                                                                                            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15));
    const __m256i top2 = _mm256_and_si256(_mm256_srli_epi16(b, 2), _mm256_set1_epi8(0x30));   // (q >> 6) << 4
    return _mm256_or_si256(_mm256_or_si256(low, high_nibble), top2);
}

inline __m128i k4_scales_mins(const uint8_t * packed) { return _mm256_castsi256_si128(k4_scales_mins_dup(packed)); }

// From k4_scales_mins_dup's bytes: each sub-block's min beside both of its 16-element bsums (a
// q8_K block's bsums), as 16-bit lanes, so one madd gives min_k times sub-block k's bsum.
inline __m256i k4_mins_by_bsum(__m256i scales_mins) {
    constexpr char z = static_cast<char>(0x80);
    return _mm256_shuffle_epi8(scales_mins, _mm256_setr_epi8(8, z, 8, z, 9, z, 9, z, 10, z, 10, z, 11, z, 11, z,
                                                             12, z, 12, z, 13, z, 13, z, 14, z, 14, z, 15, z, 15, z));
}

}  // namespace
}  // namespace hearth::kernels::cpu::avx2
