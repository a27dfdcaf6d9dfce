// Row-level conversions and dot products for every tensor_type the CPU supports.
// A "row" is n elements (n a multiple of the type's block size) stored as consecutive blocks.
// Each weight type has a partner "vec_dot type" that activations are converted to once per
// matmul (q8_0 for q4_0/q5_0/q8_0/iq4_nl, q8_1 for q4_1/q5_1, q8_K for the K-quants, f32 for
// f32, f16 for f16, bf16 for bf16), so the inner loop is an integer (or half) dot product, as in
// llama.cpp; this is also what makes our logits match its logits.
// Every function has a scalar reference (kernels/cpu/generic/) and, where it pays, AVX2 and NEON
// paths; the fastest path the CPU supports is picked once at start-up (kernels/cpu/dispatch.cpp).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/tensor_type.h"

namespace hearth::kernels {

// Whether this build can dequantize / dot this type at all.
bool is_supported(tensor_type t);

// Bytes of a row of n elements (n % block_size == 0).
size_t row_size(tensor_type t, int64_t n);

// dst[0..n) = the values of the row, as llama.cpp (and the `gguf` package) decode them.
void dequantize_row(tensor_type t, const void * src, float * dst, int64_t n);

// The type activations are converted to before a dot product with a row of weight type t.
tensor_type vec_dot_type(tensor_type t);

// Quantizes n floats into a row of type t. Supported: f32 (copy), f16, bf16, q8_0, q8_1, q8_K,
// q4_0 (the activation and KV-cache types).
void quantize_row(tensor_type t, const float * src, void * dst, int64_t n);

// sum_i w[i] * a[i] over a row of n elements: w of type wt, a of type vec_dot_type(wt).
// `a` must come from quantize_row: the SIMD paths rely on its q8 quants never being -128
// (weights may hold any value).
float vec_dot(tensor_type wt, int64_t n, const void * w, const void * a);

// out[r] = vec_dot(wt, n, w + r * w_stride_bytes, a) for r in [0, n_rows): one activation row
// against several weight rows (a matvec slice). Bit-identical to calling vec_dot per row; the
// SIMD variants use it to keep the activation row in registers/L1 across rows.
void vec_dot_rows(tensor_type wt, int64_t n, const void * w, size_t w_stride_bytes, const void * a, float * out,
                  int64_t n_rows);

// out[t * out_stride + r] = vec_dot(wt, n, w + r * w_stride_bytes, a + t * a_stride_bytes) for r < n_rows,
// t < n_tokens: a tile of weight rows against several activation rows (prefill). Bit-identical to
// vec_dot per element unless vec_dot_tile_in_batch_order(wt); SIMD variants unpack each weight
// block once for several tokens.
void vec_dot_tile(tensor_type wt, int64_t n, const void * w, size_t w_stride_bytes, int64_t n_rows, const void * a,
                  size_t a_stride_bytes, int64_t n_tokens, float * out, int64_t out_stride);

// Whether vec_dot_tile sums in llama.cpp's batch order for this type (x86 q4_K / q6_K), equal to
// vec_dot only up to float rounding.
bool vec_dot_tile_in_batch_order(tensor_type wt);

// Whether vec_dot_tile rearranges its weight rows on every call (AVX-512 VNNI q4_K / q6_K: the
// row lanes of kernels/cpu/x86/quant_row_groups.h). That costs the same whatever the call's
// token count, so a caller should give each call as many tokens as it can.
bool vec_dot_tile_repacks_rows(tensor_type wt);

}  // namespace hearth::kernels
