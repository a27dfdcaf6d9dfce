// The operations of a transformer layer on a CUDA device, queued on the device's stream (they run
// by device::finish()). Each mirrors the Vulkan shader of the same name (kernels/vulkan/shaders)
// and so the CPU kernel it matches: the same decoding, the same activation quantization, the same
// integer block sums, f16 products and RMS norm summed in double; the tests of tests/kernels/cuda
// hold them to the tolerances docs/gpu.md states for the Vulkan backend. Shapes are the CPU
// kernels'; activations are f32 row-major in device buffers.
// Preconditions (asserted): buffers large enough for the shapes, weight types as supports_weight().
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention_shape.h"
#include "kernels/device_ops.h"
#include "kernels/ops.h"
#include "kernels/tensor_type.h"

namespace hearth::kernels::cuda {

class buffer;

using weight_buffer = weight_in<buffer>;   // a weight matrix in a device buffer

// Whether matmul takes weights of this type (formats.h declares_weight: q8_0, q4_0, q5_0, q4_K, q6_K,
// f16, f32). q8_0, q4_0 and q5_0 rows are whole 32-element blocks, q4_K and q6_K rows whole
// 256-element super-blocks; f16 and f32 rows may be any length.
bool supports_weight(tensor_type t);

// Whether the products with this weight type take their activations quantized to q8_0 (q8_0, q4_0,
// q5_0). q4_K and q6_K take q8_K, which matmul makes itself from x in the device's scratch.
bool takes_q8_0_activations(tensor_type t);
// Bytes of n_tokens rows of n_cols activations in q8_0 (n_cols % 32 == 0): per block of 32 an f32
// scale (the value of the CPU's f16 scale) and 32 int8.
size_t q8_0_activation_bytes(int64_t n_tokens, int64_t n_cols);
void quantize_q8_0(const buffer & x, const buffer & x_q8, int64_t n_tokens, int64_t n_cols);

// y[t][r] = w row r . x[t]; x: [n_tokens][n_cols], y: [n_tokens][n_rows]; x_q8 required for the
// types that take q8_0 activations (ignored by the others); q4_K and q6_K products quantize x to
// q8_K first, as the CPU's quantize_row; f16 weights meet x rounded to f16, summed in double.
// Quantized products sum each block's integers exactly as the CPU's vec_dot and scale them as it
// does; only the f32 sum over the blocks runs in another order.
void matmul(const weight_buffer & w, const buffer & x, const buffer & y, int64_t n_tokens, const buffer * x_q8 = nullptr);

// Expert products of a mixture of experts: y[t][j] ([n_tokens][n_used][expert_rows]) = rows
// [e * expert_rows, (e + 1) * expert_rows) of w, e = ids[t][j] (int32), times x[t] or, with
// x_per_pick, x[t][j] (x [n_tokens][n_used][w.n_cols]); x_q8 the q8_0 form of all x's rows. Each
// product is matmul's for that expert's rows, to the bit.
void matmul_experts(const weight_buffer & w, int64_t expert_rows, const buffer & x, bool x_per_pick, const buffer & ids,
                    const buffer & y, int64_t n_tokens, int64_t n_used, const buffer * x_q8 = nullptr);

// y = x / sqrt(mean(x^2) + eps) * w row by row (w: [n] or nullptr); the squares summed in double.
void rms_norm(const buffer & x, const buffer * w, const buffer & y, int64_t n_tokens, int64_t n, float eps);
// y = (x - mean) / sqrt(var + eps) * w + b row by row (w, b: [n] or nullptr); sums in double.
void layer_norm(const buffer & x, const buffer * w, const buffer * b, const buffer & y, int64_t n_tokens, int64_t n,
                float eps);
// x: [n_tokens][n_head * head_dim] rotated in place; pos: [n_tokens] int32; freq_factors:
// [p.n_rot / 2] on the device or nullptr (p.freq_factors, a host pointer, is not read);
// p.attn_factor scales cos and sin.
void rope(const buffer & x, const buffer & pos, int64_t n_tokens, int64_t n_head, int64_t head_dim, const rope_params & p,
          const buffer * freq_factors = nullptr);
// Element-wise over n elements; y may be an input.
void swiglu(const buffer & gate, const buffer & up, const buffer & y, int64_t n);   // silu(gate) * up
void silu(const buffer & x, const buffer & y, int64_t n);                           // x / (1 + exp(-x))
void gelu(const buffer & x, const buffer & y, int64_t n);   // the CPU's: via f16 in and out, 0 below -10, x from 10
// y[i] = a[i] + b[i % n_b] and a[i] * b[i % n_b] over n elements (n a multiple of n_b; y may be a).
void add(const buffer & a, const buffer & b, const buffer & y, int64_t n, int64_t n_b);
void mul(const buffer & a, const buffer & b, const buffer & y, int64_t n, int64_t n_b);   // y[i] = a[i] * b[i % n_b]
void scale(const buffer & x, float s, int64_t n);                            // x[i] *= s in place

// The router of a mixture of experts, as inference/graph/moe.cpp: per token the softmax of its logits
// ([n_tokens][n_expert]), the n_used best experts (ties to the lower id) into ids ([n_tokens]
// [n_used] int32) and their probabilities over their sum (a double sum, clamped below at
// 6.103515625e-5) into weights ([n_tokens][n_used]).
void moe_route(const buffer & logits, const buffer & ids, const buffer & weights, int64_t n_tokens, int64_t n_expert,
               int64_t n_used);
// y[t] = sum over j in order of weights[t][j] * x[t][j]: x [n_tokens][n_used][n], y [n_tokens][n]
// (not x).
void moe_combine(const buffer & x, const buffer & weights, const buffer & y, int64_t n_tokens, int64_t n_used, int64_t n);

// Whether kv_append and attention take K or V rows of n_embd_kv values in this type: f16 (n_embd_kv
// even), q8_0 and q4_0 (whole 32-value blocks); formats.h declares_cache.
bool takes_cache(tensor_type t, int64_t n_embd_kv);

// Rows src[t] ([n_tokens][n_embd_kv] f32) into a cache of `type` at positions first_pos + t, the
// bytes quantize_row(type) writes (f16 rounded to nearest even; q8_0 and q4_0 blocks as the CPU's).
void kv_append(tensor_type type, const buffer & src, const buffer & cache, int32_t first_pos, int64_t n_tokens,
               int64_t n_embd_kv);

// attention() of kernels/attention.h over K rows in k_type and V rows in v_type (each as takes_cache);
// n_kv, kv_start: [n_tokens] int32; scores: scratch of n_tokens * n_head * n_ctx floats (n_ctx >=
// every n_kv[t]); head_dim <= 256. All f32: the softmax as the CPU's online path, up to float rounding.
void attention(tensor_type k_type, tensor_type v_type, const buffer & q, const buffer & k, const buffer & v,
               const buffer & n_kv, const buffer & kv_start, const buffer & scores, const buffer & out,
               const attention_shape & shape);

}  // namespace hearth::kernels::cuda
