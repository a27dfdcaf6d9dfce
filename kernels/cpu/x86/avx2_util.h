// Small AVX2 helpers shared by the x86 quant kernels. Internal linkage on purpose: the x86
// files are compiled with different ISA flags (AVX2; AVX-512 for the *_avx512 ones), and an
// inline function shared between them could be linked in its AVX-512 build and run on a CPU
// without it; each file gets its own copy instead.
// Thread-safety: pure functions.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace hearth::kernels::cpu::avx2 {
namespace {

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline float fp16(uint16_t h) { return _cvtsh_ss(h); }

// 32 nibbles -> 32 bytes: the low nibbles of the 16 bytes first, then the high nibbles.
// (One broadcast load, then the upper 128-bit lane alone shifted by 4: no cross-lane insert.)
inline __m256i bytes_from_nibbles(const uint8_t * qs) {
    const __m256i both = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(qs)));
    const __m256i shifted = _mm256_srlv_epi64(both, _mm256_setr_epi64x(0, 0, 4, 4));
    return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0F));
}

// 32 bits -> 32 bytes: 0xFF where the bit is set, 0 elsewhere (byte i <- bit i).
inline __m256i bytes_from_bits(const uint8_t * bits4) {
    // A broadcast straight from memory (vbroadcastss is a pure load, no shuffle port).
    const __m256i all = _mm256_castps_si256(_mm256_broadcast_ss(reinterpret_cast<const float *>(bits4)));
    const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
    __m256i bytes = _mm256_shuffle_epi8(all, shuf);
    bytes = _mm256_or_si256(bytes, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe));
    return _mm256_cmpeq_epi8(bytes, _mm256_set1_epi64x(-1));
}

// sum of x[i] * y[i] per group of 8 bytes... as 8 int32 lanes (each lane sums 4 products).
// x may hold -128; y must not (activations never do: quantizers clamp to +-127).
inline __m256i dot_i8_i32(__m256i x, __m256i y) {
    const __m256i ax = _mm256_sign_epi8(x, x);
    const __m256i sy = _mm256_sign_epi8(y, x);
    return _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sy), _mm256_set1_epi16(1));
}

// The same for unsigned x (0..255 where x * 127 * 2 fits int16, i.e. x <= 128).
inline __m256i dot_u8_i8_i32(__m256i x, __m256i y) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), _mm256_set1_epi16(1));
}

// Asks for [p, p + bytes) in L1 ahead of use: a prefill tile works on one group of weight rows
// for a long time, so the hardware prefetchers do not run ahead into the next group, whose first
// reads waited on memory (most of the time the tiles spent outside their inner loops).
inline void prefetch_bytes(const void * p, size_t bytes) {
    const auto * c = static_cast<const char *>(p);
    for (size_t o = 0; o < bytes; o += 64) _mm_prefetch(c + o, _MM_HINT_T0);
}

// Calls tile.template operator()<T>(t) for token tiles of N from t = 0 and one of 1..N-1 for
// the rest: how the prefill kernels cut n_tokens into register tiles of fixed size.
template <int K, class F>
inline void token_tile_tail(int64_t rest, int64_t t, F & tile) {
    if constexpr (K > 0) {
        if (rest == K) tile.template operator()<K>(t);
        else token_tile_tail<K - 1>(rest, t, tile);
    }
}
template <int N = 4, class F>
inline void for_token_tiles(int64_t n_tokens, F && tile) {
    int64_t t = 0;
    for (; t + N <= n_tokens; t += N) tile.template operator()<N>(t);
    token_tile_tail<N - 1>(n_tokens - t, t, tile);
}

}  // namespace
}  // namespace hearth::kernels::cpu::avx2
