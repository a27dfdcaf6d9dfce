// Internal to kernels/cpu/x86: the AVX2(+FMA+F16C) quant kernels, registered by
// add_quant_kernels_avx2. Same signatures and contracts as kernels/cpu/generic/quant_scalar.h.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hearth::kernels::cpu::avx2 {

float vec_dot_q4_0(int64_t n, const void * w, const void * a);
float vec_dot_q5_0(int64_t n, const void * w, const void * a);
float vec_dot_q8_0(int64_t n, const void * w, const void * a);
float vec_dot_iq4_nl(int64_t n, const void * w, const void * a);
void vec_dot_rows_q4_0(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows);
void vec_dot_tile_q4_0(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                      int64_t n_tokens, float * out, int64_t out_stride);
void vec_dot_rows_q5_0(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows);
void vec_dot_tile_q5_0(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                      int64_t n_tokens, float * out, int64_t out_stride);
void vec_dot_rows_q8_0(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows);
void vec_dot_tile_q8_0(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                      int64_t n_tokens, float * out, int64_t out_stride);
void vec_dot_rows_iq4_nl(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows);
void vec_dot_tile_iq4_nl(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                      int64_t n_tokens, float * out, int64_t out_stride);
float vec_dot_q4_1(int64_t n, const void * w, const void * a);
float vec_dot_q5_1(int64_t n, const void * w, const void * a);
float vec_dot_f32(int64_t n, const void * w, const void * a);
float vec_dot_f16(int64_t n, const void * w, const void * a);
float vec_dot_bf16(int64_t n, const void * w, const void * a);

float vec_dot_q2_K(int64_t n, const void * w, const void * a);
float vec_dot_q3_K(int64_t n, const void * w, const void * a);
float vec_dot_q4_K(int64_t n, const void * w, const void * a);
float vec_dot_q5_K(int64_t n, const void * w, const void * a);
float vec_dot_q6_K(int64_t n, const void * w, const void * a);
void vec_dot_tile_q4_K(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                       int64_t n_tokens, float * out, int64_t out_stride);
void vec_dot_tile_q6_K(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
                       int64_t n_tokens, float * out, int64_t out_stride);
float vec_dot_iq4_xs(int64_t n, const void * w, const void * a);

void quantize_row_q8_0(const float * src, void * dst, int64_t n);
void quantize_row_q8_1(const float * src, void * dst, int64_t n);
void quantize_row_q8_K(const float * src, void * dst, int64_t n);
void quantize_row_f16(const float * src, void * dst, int64_t n);
void dequantize_row_f16(const void * src, float * dst, int64_t n);
void dequantize_row_q8_0(const void * src, float * dst, int64_t n);
void dequantize_row_q4_0(const void * src, float * dst, int64_t n);

}  // namespace hearth::kernels::cpu::avx2
