// Scalar reference for the plain float types: f32, f16, bf16.
// Dot products accumulate in double, as ggml's reference does, so they are the accurate baseline.
#pragma GCC optimize("fp-contract=off")

#include <cstring>

#include "kernels/cpu/generic/quant_scalar.h"
#include "kernels/fp16.h"

namespace hearth::kernels::cpu::scalar {

void dequantize_row_f32(const void * src, float * dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void dequantize_row_f16(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const uint16_t *>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(x[i]);
}

void dequantize_row_bf16(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const uint16_t *>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(x[i]);
}

void quantize_row_f32(const float * src, void * dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void quantize_row_f16(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<uint16_t *>(dst);
    for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_fp16(src[i]);
}

void quantize_row_bf16(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<uint16_t *>(dst);
    for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_bf16(src[i]);
}

float vec_dot_f32(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const float *>(w);
    const auto * y = static_cast<const float *>(a);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * y[i]);
    return static_cast<float>(sum);
}

float vec_dot_f16(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const uint16_t *>(w);
    const auto * y = static_cast<const uint16_t *>(a);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(fp16_to_fp32(x[i]) * fp16_to_fp32(y[i]));
    return static_cast<float>(sum);
}

float vec_dot_bf16(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const uint16_t *>(w);
    const auto * y = static_cast<const uint16_t *>(a);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(bf16_to_fp32(x[i]) * bf16_to_fp32(y[i]));
    return static_cast<float>(sum);
}

}  // namespace hearth::kernels::cpu::scalar
