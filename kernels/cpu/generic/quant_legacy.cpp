// Scalar reference for the 32-element block types: q4_0, q4_1, q5_0, q5_1, q8_0, q8_1, iq4_nl.
// Quantizers follow ggml's *_ref functions exactly (same f32 operations, same rounding), which the
// `gguf` package's numpy mirrors, so rows match it byte for byte.
#pragma GCC optimize("fp-contract=off")

#include <algorithm>
#include <cmath>

#include "kernels/blocks.h"
#include "kernels/cpu/generic/quant_scalar.h"
#include "kernels/fp16.h"

namespace hearth::kernels::cpu::scalar {

void dequantize_row_q4_0(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q4_0 *>(src);
    for (int64_t i = 0; i < n / k_qk4_0; ++i, dst += k_qk4_0) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < k_qk4_0 / 2; ++j) {
            dst[j] = d * static_cast<float>((x[i].qs[j] & 0x0F) - 8);
            dst[j + k_qk4_0 / 2] = d * static_cast<float>((x[i].qs[j] >> 4) - 8);
        }
    }
}

void dequantize_row_q4_1(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q4_1 *>(src);
    for (int64_t i = 0; i < n / k_qk4_1; ++i, dst += k_qk4_1) {
        const float d = fp16_to_fp32(x[i].d);
        const float m = fp16_to_fp32(x[i].m);
        for (int j = 0; j < k_qk4_1 / 2; ++j) {
            dst[j] = d * static_cast<float>(x[i].qs[j] & 0x0F) + m;
            dst[j + k_qk4_1 / 2] = d * static_cast<float>(x[i].qs[j] >> 4) + m;
        }
    }
}

static uint32_t load_qh(const uint8_t * qh) {
    return static_cast<uint32_t>(qh[0]) | static_cast<uint32_t>(qh[1]) << 8 |
           static_cast<uint32_t>(qh[2]) << 16 | static_cast<uint32_t>(qh[3]) << 24;
}

void dequantize_row_q5_0(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q5_0 *>(src);
    for (int64_t i = 0; i < n / k_qk5_0; ++i, dst += k_qk5_0) {
        const float d = fp16_to_fp32(x[i].d);
        const uint32_t qh = load_qh(x[i].qh);
        for (int j = 0; j < k_qk5_0 / 2; ++j) {
            const int h0 = ((qh >> j) & 1) << 4;
            const int h1 = ((qh >> (j + 16)) & 1) << 4;
            dst[j] = d * static_cast<float>(((x[i].qs[j] & 0x0F) | h0) - 16);
            dst[j + k_qk5_0 / 2] = d * static_cast<float>(((x[i].qs[j] >> 4) | h1) - 16);
        }
    }
}

void dequantize_row_q5_1(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q5_1 *>(src);
    for (int64_t i = 0; i < n / k_qk5_1; ++i, dst += k_qk5_1) {
        const float d = fp16_to_fp32(x[i].d);
        const float m = fp16_to_fp32(x[i].m);
        const uint32_t qh = load_qh(x[i].qh);
        for (int j = 0; j < k_qk5_1 / 2; ++j) {
            const int h0 = ((qh >> j) & 1) << 4;
            const int h1 = ((qh >> (j + 16)) & 1) << 4;
            dst[j] = d * static_cast<float>((x[i].qs[j] & 0x0F) | h0) + m;
            dst[j + k_qk5_1 / 2] = d * static_cast<float>((x[i].qs[j] >> 4) | h1) + m;
        }
    }
}

void dequantize_row_q8_0(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q8_0 *>(src);
    for (int64_t i = 0; i < n / k_qk8_0; ++i, dst += k_qk8_0) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < k_qk8_0; ++j) dst[j] = static_cast<float>(x[i].qs[j]) * d;
    }
}

void dequantize_row_q8_1(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q8_1 *>(src);
    for (int64_t i = 0; i < n / k_qk8_1; ++i, dst += k_qk8_1) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < k_qk8_1; ++j) dst[j] = static_cast<float>(x[i].qs[j]) * d;
    }
}

void dequantize_row_iq4_nl(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_iq4_nl *>(src);
    for (int64_t i = 0; i < n / k_qk4_nl; ++i, dst += k_qk4_nl) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < k_qk4_nl / 2; ++j) {
            dst[j] = d * static_cast<float>(k_iq4nl_values[x[i].qs[j] & 0x0F]);
            dst[j + k_qk4_nl / 2] = d * static_cast<float>(k_iq4nl_values[x[i].qs[j] >> 4]);
        }
    }
}

void quantize_row_q4_0(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<block_q4_0 *>(dst);
    for (int64_t i = 0; i < n / k_qk4_0; ++i, src += k_qk4_0) {
        // The element of largest magnitude (first one on ties) keeps its sign. Starting from src[0]
        // rather than 0 only changes an all-zero block led by -0.0: d is then +0.0, as the `gguf`
        // package writes it (ggml writes -0.0; both decode to zeros).
        float amax = 0.0f;
        float max = src[0];
        for (int j = 0; j < k_qk4_0; ++j) {
            if (amax < std::fabs(src[j])) {
                amax = std::fabs(src[j]);
                max = src[j];
            }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16(d);
        for (int j = 0; j < k_qk4_0 / 2; ++j) {
            const float x0 = src[j] * id;
            const float x1 = src[j + k_qk4_0 / 2] * id;
            const auto q0 = static_cast<uint8_t>(std::min(15, static_cast<int>(x0 + 8.5f)));
            const auto q1 = static_cast<uint8_t>(std::min(15, static_cast<int>(x1 + 8.5f)));
            y[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

void quantize_row_q8_0(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<block_q8_0 *>(dst);
    for (int64_t i = 0; i < n / k_qk8_0; ++i, src += k_qk8_0) {
        float amax = 0.0f;
        for (int j = 0; j < k_qk8_0; ++j) amax = std::max(amax, std::fabs(src[j]));
        // ggml's CPU backend (not its reference quantizer): 127 / amax rather than 1 / d, and
        // ties to even, so our activations quantize exactly as llama.cpp's at run time.
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[i].d = fp32_to_fp16(d);
        for (int j = 0; j < k_qk8_0; ++j) y[i].qs[j] = static_cast<int8_t>(std::nearbyint(src[j] * id));
    }
}

void quantize_row_q8_1(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<block_q8_1 *>(dst);
    for (int64_t i = 0; i < n / k_qk8_1; ++i, src += k_qk8_1) {
        float amax = 0.0f;
        for (int j = 0; j < k_qk8_1; ++j) amax = std::max(amax, std::fabs(src[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int sum = 0;
        for (int j = 0; j < k_qk8_1; ++j) {
            y[i].qs[j] = static_cast<int8_t>(std::round(src[j] * id));
            sum += y[i].qs[j];
        }
        y[i].d = fp32_to_fp16(d);
        y[i].s = fp32_to_fp16(static_cast<float>(sum) * d);
    }
}

float vec_dot_q4_0(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q4_0 *>(w);
    const auto * y = static_cast<const block_q8_0 *>(a);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk4_0; ++i) {
        int sumi = 0;
        for (int j = 0; j < k_qk4_0 / 2; ++j) {
            sumi += ((x[i].qs[j] & 0x0F) - 8) * y[i].qs[j];
            sumi += ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + k_qk4_0 / 2];
        }
        sumf += static_cast<float>(sumi) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
    }
    return sumf;
}

float vec_dot_q4_1(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q4_1 *>(w);
    const auto * y = static_cast<const block_q8_1 *>(a);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk4_1; ++i) {
        int sumi = 0;
        for (int j = 0; j < k_qk4_1 / 2; ++j) {
            sumi += (x[i].qs[j] & 0x0F) * y[i].qs[j];
            sumi += (x[i].qs[j] >> 4) * y[i].qs[j + k_qk4_1 / 2];
        }
        // sum(d_x q_x + m_x)(d_y q_y) = d_x d_y sum(q_x q_y) + m_x (d_y sum q_y), the last factor is s.
        sumf += (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d)) * static_cast<float>(sumi) +
                fp16_to_fp32(x[i].m) * fp16_to_fp32(y[i].s);
    }
    return sumf;
}

float vec_dot_q5_0(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q5_0 *>(w);
    const auto * y = static_cast<const block_q8_0 *>(a);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk5_0; ++i) {
        const uint32_t qh = load_qh(x[i].qh);
        int sumi = 0;
        for (int j = 0; j < k_qk5_0 / 2; ++j) {
            const int h0 = ((qh >> j) & 1) << 4;
            const int h1 = ((qh >> (j + 16)) & 1) << 4;
            sumi += (((x[i].qs[j] & 0x0F) | h0) - 16) * y[i].qs[j];
            sumi += (((x[i].qs[j] >> 4) | h1) - 16) * y[i].qs[j + k_qk5_0 / 2];
        }
        sumf += static_cast<float>(sumi) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
    }
    return sumf;
}

float vec_dot_q5_1(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q5_1 *>(w);
    const auto * y = static_cast<const block_q8_1 *>(a);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk5_1; ++i) {
        const uint32_t qh = load_qh(x[i].qh);
        int sumi = 0;
        for (int j = 0; j < k_qk5_1 / 2; ++j) {
            const int h0 = ((qh >> j) & 1) << 4;
            const int h1 = ((qh >> (j + 16)) & 1) << 4;
            sumi += ((x[i].qs[j] & 0x0F) | h0) * y[i].qs[j];
            sumi += ((x[i].qs[j] >> 4) | h1) * y[i].qs[j + k_qk5_1 / 2];
        }
        sumf += (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d)) * static_cast<float>(sumi) +
                fp16_to_fp32(x[i].m) * fp16_to_fp32(y[i].s);
    }
    return sumf;
}

float vec_dot_q8_0(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q8_0 *>(w);
    const auto * y = static_cast<const block_q8_0 *>(a);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk8_0; ++i) {
        int sumi = 0;
        for (int j = 0; j < k_qk8_0; ++j) sumi += x[i].qs[j] * y[i].qs[j];
        sumf += static_cast<float>(sumi) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
    }
    return sumf;
}

float vec_dot_iq4_nl(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_iq4_nl *>(w);
    const auto * y = static_cast<const block_q8_0 *>(a);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk4_nl; ++i) {
        int sumi = 0;
        for (int j = 0; j < k_qk4_nl / 2; ++j) {
            sumi += k_iq4nl_values[x[i].qs[j] & 0x0F] * y[i].qs[j];
            sumi += k_iq4nl_values[x[i].qs[j] >> 4] * y[i].qs[j + k_qk4_nl / 2];
        }
        sumf += static_cast<float>(sumi) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
    }
    return sumf;
}

}  // namespace hearth::kernels::cpu::scalar
