// Scalar conversions between f32 and the two 16-bit float formats GGUF stores (IEEE half, bf16).
// Invariants: every conversion is exact where the target can represent the value and rounds to
// nearest-even otherwise; NaN handling follows numpy (what the `gguf` package uses), so f16 scales
// that are NaN, Inf or subnormal decode bit for bit as the reference decodes them:
//   f16 -> f32 keeps the NaN payload (a signalling NaN stays signalling);
//   f32 -> f16 keeps the top ten payload bits of a NaN (forcing one bit if they are all zero);
//   f32 -> bf16 quiets NaNs as ggml does.
// Portable code only (no F16C): SIMD files convert in bulk with their own instructions.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>

namespace hearth::kernels {

inline uint32_t f32_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float f32_from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

inline float fp16_to_fp32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return f32_from_bits(sign | 0x7f800000u | (mant << 13));   // Inf / NaN, payload kept
    if (exp != 0) return f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
    // Zero or subnormal: mant * 2^-24 is exact in f32.
    const float mag = static_cast<float>(mant) * 0x1p-24f;
    return f32_from_bits(sign | f32_bits(mag));
}

inline uint16_t fp32_to_fp16(float f) {
    const uint32_t x = f32_bits(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) {                        // NaN: keep the top payload bits, stay a NaN
        uint16_t m = static_cast<uint16_t>((ax & 0x7fffffu) >> 13);
        if (m == 0) m = 1;
        return static_cast<uint16_t>(sign | 0x7c00u | m);
    }
    if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);   // >= 65520 rounds to Inf
    if (ax < 0x38800000u) {                        // below 2^-14: the result is subnormal or zero
        if (ax <= 0x33000000u) return sign;        // <= 2^-25 rounds (ties to even) to zero
        const uint32_t e = ax >> 23;
        const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126u - e;           // value / 2^-24 = m >> shift, 14 <= shift <= 24
        uint32_t q = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1u);
        const uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) ++q;   // a carry to 0x400 is the smallest normal
        return static_cast<uint16_t>(sign | q);
    }
    const uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u) - (112u << 23);   // round to nearest even, rebias
    return static_cast<uint16_t>(sign | (r >> 13));
}

inline float bf16_to_fp32(uint16_t h) { return f32_from_bits(static_cast<uint32_t>(h) << 16); }

inline uint16_t fp32_to_bf16(float f) {
    const uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 64u);   // quiet NaN
    return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace hearth::kernels
