// The scalar reference of every quant format: the numerics every SIMD variant is tested against.
// They follow ggml's reference C code (ggml-quants.c, the generic vec_dot): dequantization
// multiplies in the same order (so results equal the `gguf` package's numpy bit for bit), and dot
// products sum integers per block and scale each block sum by d_w * d_a in f32.
// Floating-point contraction is off in these files so aarch64 builds round as x86 ones do.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

namespace hearth::kernels::cpu::scalar {

// Plain types.
void dequantize_row_f32(const void * src, float * dst, int64_t n);
void dequantize_row_f16(const void * src, float * dst, int64_t n);
void dequantize_row_bf16(const void * src, float * dst, int64_t n);
void quantize_row_f32(const float * src, void * dst, int64_t n);
void quantize_row_f16(const float * src, void * dst, int64_t n);
void quantize_row_bf16(const float * src, void * dst, int64_t n);
float vec_dot_f32(int64_t n, const void * w, const void * a);
float vec_dot_f16(int64_t n, const void * w, const void * a);
float vec_dot_bf16(int64_t n, const void * w, const void * a);

// 32-element block types.
void dequantize_row_q4_0(const void * src, float * dst, int64_t n);
void dequantize_row_q4_1(const void * src, float * dst, int64_t n);
void dequantize_row_q5_0(const void * src, float * dst, int64_t n);
void dequantize_row_q5_1(const void * src, float * dst, int64_t n);
void dequantize_row_q8_0(const void * src, float * dst, int64_t n);
void dequantize_row_q8_1(const void * src, float * dst, int64_t n);
void dequantize_row_iq4_nl(const void * src, float * dst, int64_t n);
void quantize_row_q4_0(const float * src, void * dst, int64_t n);
void quantize_row_q8_0(const float * src, void * dst, int64_t n);
void quantize_row_q8_1(const float * src, void * dst, int64_t n);
float vec_dot_q4_0(int64_t n, const void * w, const void * a);    // a: q8_0
float vec_dot_q4_1(int64_t n, const void * w, const void * a);    // a: q8_1
float vec_dot_q5_0(int64_t n, const void * w, const void * a);    // a: q8_0
float vec_dot_q5_1(int64_t n, const void * w, const void * a);    // a: q8_1
float vec_dot_q8_0(int64_t n, const void * w, const void * a);    // a: q8_0
float vec_dot_iq4_nl(int64_t n, const void * w, const void * a);  // a: q8_0

// 256-element super-block types; every dot product takes q8_K activations.
void dequantize_row_q2_K(const void * src, float * dst, int64_t n);
void dequantize_row_q3_K(const void * src, float * dst, int64_t n);
void dequantize_row_q4_K(const void * src, float * dst, int64_t n);
void dequantize_row_q5_K(const void * src, float * dst, int64_t n);
void dequantize_row_q6_K(const void * src, float * dst, int64_t n);
void dequantize_row_q8_K(const void * src, float * dst, int64_t n);
void dequantize_row_iq4_xs(const void * src, float * dst, int64_t n);
void quantize_row_q8_K(const float * src, void * dst, int64_t n);
float vec_dot_q2_K(int64_t n, const void * w, const void * a);
float vec_dot_q3_K(int64_t n, const void * w, const void * a);
float vec_dot_q4_K(int64_t n, const void * w, const void * a);
float vec_dot_q5_K(int64_t n, const void * w, const void * a);
float vec_dot_q6_K(int64_t n, const void * w, const void * a);
float vec_dot_iq4_xs(int64_t n, const void * w, const void * a);

}  // namespace hearth::kernels::cpu::scalar
