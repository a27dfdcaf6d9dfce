// Block layouts of the quantized GGUF tensor types, byte for byte as ggml stores them
// (ggml-common.h). A row of n elements is n / block_size consecutive blocks.
// Invariants: sizeof each struct equals the type's GGUF type_size (static_asserts below); all
// fp16 fields are IEEE half bit patterns (decode with kernels/fp16.h). Blocks only need 2-byte
// alignment (4 for block_q8_K), which GGUF's 32-byte tensor alignment and even block sizes give.
// Thread-safety: plain data.
#pragma once

#include <cstdint>

namespace hearth::kernels {

inline constexpr int k_qk4_0 = 32;
inline constexpr int k_qk4_1 = 32;
inline constexpr int k_qk5_0 = 32;
inline constexpr int k_qk5_1 = 32;
inline constexpr int k_qk8_0 = 32;
inline constexpr int k_qk8_1 = 32;
inline constexpr int k_qk4_nl = 32;
inline constexpr int k_qk_k = 256;       // super-block size of the K-quants and IQ4_XS
inline constexpr int k_k_scale_size = 12;

// 32 weights share one fp16 scale: w[i] = d * (q[i] - 8).
struct block_q4_0 {
    uint16_t d;
    uint8_t qs[k_qk4_0 / 2];   // element j in the low nibble of qs[j], element j+16 in the high nibble
};
static_assert(sizeof(block_q4_0) == 2 + k_qk4_0 / 2);

// w[i] = d * q[i] + m, q in [0, 15].
struct block_q4_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qs[k_qk4_1 / 2];
};
static_assert(sizeof(block_q4_1) == 4 + k_qk4_1 / 2);

// w[i] = d * (q[i] - 16); the fifth bit of element j is bit j of qh (little-endian u32).
struct block_q5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[k_qk5_0 / 2];
};
static_assert(sizeof(block_q5_0) == 2 + 4 + k_qk5_0 / 2);

// w[i] = d * q[i] + m, q in [0, 31].
struct block_q5_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qh[4];
    uint8_t qs[k_qk5_1 / 2];
};
static_assert(sizeof(block_q5_1) == 4 + 4 + k_qk5_1 / 2);

// w[i] = d * q[i], q in [-127, 127].
struct block_q8_0 {
    uint16_t d;
    int8_t qs[k_qk8_0];
};
static_assert(sizeof(block_q8_0) == 2 + k_qk8_0);

// As q8_0 plus s = d * sum(q) in fp16, for the q4_1/q5_1 dot products. 36 bytes, as ggml's C
// code has it (the `gguf` Python package's table says 40, from an older layout with f32 d and s;
// q8_1 only ever exists in memory, never in a file).
struct block_q8_1 {
    uint16_t d;
    uint16_t s;
    int8_t qs[k_qk8_1];
};
static_assert(sizeof(block_q8_1) == 4 + k_qk8_1);

// 16 sub-blocks of 16: w = d * (scales[s] & 15) * q - dmin * (scales[s] >> 4), q in [0, 3].
struct block_q2_K {
    uint8_t scales[k_qk_k / 16];
    uint8_t qs[k_qk_k / 4];
    uint16_t d;
    uint16_t dmin;
};
static_assert(sizeof(block_q2_K) == 2 * 2 + k_qk_k / 16 + k_qk_k / 4);

// 16 sub-blocks of 16: w = d * (scale[s] - 32) * (q - (hbit ? 0 : 4)), 6-bit scales packed in 12 bytes.
struct block_q3_K {
    uint8_t hmask[k_qk_k / 8];
    uint8_t qs[k_qk_k / 4];
    uint8_t scales[12];
    uint16_t d;
};
static_assert(sizeof(block_q3_K) == 2 + k_qk_k / 4 + k_qk_k / 8 + 12);

// 8 sub-blocks of 32: w = d * sc[s] * q - dmin * m[s], 6-bit sc and m packed in 12 bytes.
struct block_q4_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[k_k_scale_size];
    uint8_t qs[k_qk_k / 2];
};
static_assert(sizeof(block_q4_K) == 2 * 2 + k_k_scale_size + k_qk_k / 2);

// As q4_K with a fifth bit per element in qh.
struct block_q5_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[k_k_scale_size];
    uint8_t qh[k_qk_k / 8];
    uint8_t qs[k_qk_k / 2];
};
static_assert(sizeof(block_q5_K) == 2 * 2 + k_k_scale_size + k_qk_k / 2 + k_qk_k / 8);

// 16 sub-blocks of 16: w = d * scales[s] * (q - 32), q 6 bits split into ql (4) and qh (2).
struct block_q6_K {
    uint8_t ql[k_qk_k / 2];
    uint8_t qh[k_qk_k / 4];
    int8_t scales[k_qk_k / 16];
    uint16_t d;
};
static_assert(sizeof(block_q6_K) == 2 + k_qk_k / 16 + 3 * k_qk_k / 4);

// Activations for the K-quant dot products: f32 scale, and the sums of each group of 16 quants.
struct block_q8_K {
    float d;
    int8_t qs[k_qk_k];
    int16_t bsums[k_qk_k / 16];
};
static_assert(sizeof(block_q8_K) == 4 + k_qk_k + k_qk_k / 16 * 2);

// As q4_0 but q indexes a fixed non-linear table (k_iq4nl_values).
struct block_iq4_nl {
    uint16_t d;
    uint8_t qs[k_qk4_nl / 2];
};
static_assert(sizeof(block_iq4_nl) == 2 + k_qk4_nl / 2);

// 8 sub-blocks of 32 with 6-bit scales (ls - 32), values from k_iq4nl_values.
struct block_iq4_xs {
    uint16_t d;
    uint16_t scales_h;
    uint8_t scales_l[k_qk_k / 64];
    uint8_t qs[k_qk_k / 2];
};
static_assert(sizeof(block_iq4_xs) == 4 + k_qk_k / 64 + k_qk_k / 2);

inline constexpr int8_t k_iq4nl_values[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};

// The 6-bit scale and min of sub-block j (0..7) of a q4_K / q5_K block.
inline void k_scale_min(int j, const uint8_t * q, uint8_t & sc, uint8_t & m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

}  // namespace hearth::kernels
