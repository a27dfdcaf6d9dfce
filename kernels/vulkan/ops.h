// The operations of a transformer layer on a Vulkan device, recorded into a stream (they run at
// its finish()). Each matches the CPU kernel of the same name (kernels/matmul.h, ops.h,
// attention.h) on the same data within the tolerance docs/gpu.md states per operation; the
// weight decoding is the CPU's bit for bit (dequantize). Shapes are those of the CPU kernels,
// f32 row-major activations in device buffers.
// Preconditions (asserted): buffers large enough for the shapes; weight types and row lengths
// as supports_weight() says.
// Thread-safety: as the stream (one owner).
#pragma once

#include <cstdint>

#include "base/result.h"
#include "kernels/attention_shape.h"
#include "kernels/device_ops.h"
#include "kernels/ops.h"
#include "kernels/tensor_type.h"

namespace hearth::kernels::vulkan {

class buffer;
class device;
class stream;

// A weight matrix in a device buffer (row_bytes even).
using weight_buffer = weight_in<buffer>;

// Whether matmul and dequantize take weights of this type (q8_0, q4_0, q5_0, q4_K, q6_K, f16,
// f32). Quantized rows are whole 32-element chunks; f16 and f32 rows may be any length.
bool supports_weight(tensor_type t);

// out: [n_rows][n_cols] f32, each row as dequantize_row decodes it.
void dequantize(stream & s, const weight_buffer & w, const buffer & out);

// Whether the products with this weight type take their activations quantized to q8_0, as the
// CPU's do (q8_0, q4_0, q5_0): matmul() then reads them from x_q8 (quantize_q8_0 of x).
bool takes_q8_0_activations(tensor_type t);
// Bytes of n_tokens rows of n_cols activations in the device's q8_0 form (n_cols % 32 == 0).
size_t q8_0_activation_bytes(int64_t n_tokens, int64_t n_cols);
// x: [n_tokens][n_cols] f32 to that form, rounded as kernels::quantize_row(q8_0) rounds.
void quantize_q8_0(stream & s, const buffer & x, const buffer & x_q8, int64_t n_tokens, int64_t n_cols);

// The same for q8_K, which the CPU's K-quant products take (q4_K, q6_K): the form is the bytes
// kernels::quantize_row(q8_k) writes (n_cols % 256 == 0), and matmul() reads it from x_q8.
bool takes_q8_k_activations(tensor_type t);
size_t q8_k_activation_bytes(int64_t n_tokens, int64_t n_cols);
void quantize_q8_k(stream & s, const buffer & x, const buffer & x_q8, int64_t n_tokens, int64_t n_cols);

// y[t][r] = w row r . x[t]; x: [n_tokens][n_cols] f32, y: [n_tokens][n_rows] f32. The activations
// meet the weights as on the CPU: quantized to q8_0 or q8_K (x_q8, required for those types, in
// the form the type takes), rounded to f16 for f16 weights, f32 for f32.
void matmul(stream & s, const weight_buffer & w, const buffer & x, const buffer & y, int64_t n_tokens,
            const buffer * x_q8 = nullptr);

// y = x / sqrt(mean(x^2) + eps) * w row by row; w: [n] or nullptr.
void rms_norm(stream & s, const buffer & x, const buffer * w, const buffer & y, int64_t n_tokens, int64_t n, float eps);

// y = (x - mean(x)) / sqrt(var(x) + eps) * w + b row by row; w, b: [n] or nullptr.
void layer_norm(stream & s, const buffer & x, const buffer * w, const buffer * b, const buffer & y, int64_t n_tokens,
                int64_t n, float eps);

// x: [n_tokens][n_head * head_dim] rotated in place; pos: [n_tokens] int32. p.freq_factors (a
// host pointer) is not read: freq_factors is the same [n_rot / 2] on the device, or nullptr.
void rope(stream & s, const buffer & x, const buffer & pos, int64_t n_tokens, int64_t n_head, int64_t head_dim,
          const rope_params & p, const buffer * freq_factors = nullptr);

// y = silu(gate) * up over n elements.
void swiglu(stream & s, const buffer & gate, const buffer & up, const buffer & y, int64_t n);
// y = silu(x) over n elements (y may be x).
void silu(stream & s, const buffer & x, const buffer & y, int64_t n);
// y = gelu(x) over n elements as kernels::gelu, through its table: gelu_table from
// make_gelu_table (y may be x).
void gelu(stream & s, const buffer & x, const buffer & gelu_table, const buffer & y, int64_t n);
// The CPU's GELU table in the form gelu() reads (an fp16 value per fp16 input, two a word).
result<buffer> make_gelu_table(const device & dev);

// y[i] = a[i] + b[i % n_b] over n elements: a residual sum (n_b = n) or a bias on every row of
// n_b (n a multiple of n_b). y may be a (in place).
void add(stream & s, const buffer & a, const buffer & b, const buffer & y, int64_t n, int64_t n_b);
// y[i] = a[i] * b[i] over n elements (y may be a).
void mul(stream & s, const buffer & a, const buffer & b, const buffer & y, int64_t n, int64_t n_b);
// x[i] *= factor over n elements, in place.
void scale(stream & s, const buffer & x, float factor, int64_t n);

// The mixture-of-experts operations, as kernels/device_ops.h states them (inference/graph/moe.cpp's
// arithmetic). logits: [n_tokens][n_expert] f32 to ids [n_tokens][n_used] int32 (best first, ties
// to the lower id) and weights [n_tokens][n_used] (renormalised). n_used <= n_expert.
void moe_route(stream & s, const buffer & logits, const buffer & ids, const buffer & weights, int64_t n_tokens,
               int64_t n_expert, int64_t n_used);
// y[t][j] = rows of expert ids[t][j] (expert_rows of them, stacked in w) times x[t], or x[t][j]
// with x_per_pick; y: [n_tokens][n_used][expert_rows]. Each product is matmul()'s of that
// sub-matrix, with its activations (x_q8 for the q8_0 and q8_K types, over all rows of x).
void matmul_experts(stream & s, const weight_buffer & w, int64_t expert_rows, const buffer & x, bool x_per_pick,
                    const buffer & ids, const buffer & y, int64_t n_tokens, int64_t n_used,
                    const buffer * x_q8 = nullptr);
// y[t] = sum over j in order of weights[t][j] * x[t][j]; x: [n_tokens][n_used][n], y: [n_tokens][n].
void moe_combine(stream & s, const buffer & x, const buffer & weights, const buffer & y, int64_t n_tokens,
                 int64_t n_used, int64_t n);

// Whether kv_append and attention take a cache of this type for rows of n_embd_kv values: f16
// (n_embd_kv even), q8_0 and q4_0 (an even number of 32-element blocks, so that each pair of
// blocks is whole 32-bit words).
bool supports_cache(tensor_type t, int64_t n_embd_kv);

// Rows src[t] ([n_tokens][n_embd_kv] f32) into a cache of `type` ([n_pos] rows of
// row_size(type, n_embd_kv) bytes) at positions first_pos + t, the bytes kernels::quantize_row
// writes. Precondition: supports_cache(type, n_embd_kv).
void kv_append(stream & s, tensor_type type, const buffer & src, const buffer & cache, int32_t first_pos,
               int64_t n_tokens, int64_t n_embd_kv);

// attention() of kernels/attention.h over a cache of K in k_type and V in v_type (each
// [n_pos][n_head_kv * head_dim] in its type, as kv_append writes it). n_kv, kv_start:
// [n_tokens] int32; scores: scratch of n_tokens * n_head * n_ctx floats, where n_ctx >= every
// n_kv[t]. head_dim <= 256.
void attention(stream & s, tensor_type k_type, tensor_type v_type, const buffer & q, const buffer & k,
               const buffer & v, const buffer & n_kv, const buffer & kv_start, const buffer & scores,
               const buffer & out, const attention_shape & shape);

}  // namespace hearth::kernels::vulkan
