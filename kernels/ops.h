// Element-wise and row-wise f32 operations of a transformer forward pass: norms, rotary position
// embedding, softmax, activations and arithmetic. Matrices are row-major [n_tokens][n].
// Numerics follow ggml's CPU backend (sums of squares in double, RoPE angles by repeated
// multiplication, GELU through an fp16 table) so logits match llama.cpp's to ~1e-6 per op.
// Every function allows out == in (in place) unless noted; other overlaps are not allowed.
// Thread-safety: pure functions (gelu's table is built once, thread-safely, on first use).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hearth::kernels {

// y = x / sqrt(mean(x^2) + eps) * w, row by row; w: [n] or nullptr for no weight.
void rms_norm(const float * x, const float * w, float * y, int64_t n_tokens, int64_t n, float eps);

// y = (x - mean(x)) / sqrt(var(x) + eps) * w + b, row by row; w and b: [n] or nullptr.
void layer_norm(const float * x, const float * w, const float * b, float * y, int64_t n_tokens, int64_t n,
                float eps);

// Rotary position embedding. "normal" (llama) rotates adjacent pairs (0,1), (2,3), ... of each
// head; "neox" (qwen2, phi, gpt-neox) rotates (i, i + n_rot/2). Only the first n_rot dimensions
// of each head rotate; the rest pass through. Pair i turns by
//   theta_i = pos * freq_scale * freq_base^(-2i/n_rot),
// computed as ggml does: theta_0 = pos, theta_{i+1} = theta_i * freq_base^(-2/n_rot) in f32.
enum class rope_mode { normal, neox };
struct rope_params {
    int32_t n_rot;        // rotated dimensions per head: even, <= head_dim
    float freq_base;      // 10000 for llama, 1e6 for qwen2.5
    float freq_scale;     // 1 / linear context scaling factor; 1 for none
    rope_mode mode;
    // Per-pair frequency factors (llama3's rope_freqs, phi3's long/short factors): pair i's
    // angle is divided by freq_factors[i], as ggml does before the scaling. [n_rot / 2]; null: none.
    const float * freq_factors = nullptr;
    float attn_factor = 1.0f;   // cos and sin times this (phi3's long-context magnitude correction)
};
// x: [n_tokens][n_head * head_dim], rotated in place; pos: [n_tokens] positions.
void rope(float * x, int64_t n_tokens, int64_t n_head, int64_t head_dim, const int32_t * pos, const rope_params & p);

// y = softmax(x * scale) over each row of n, max-subtracted; sums in double.
void softmax(const float * x, float * y, int64_t n_rows, int64_t n, float scale = 1.0f);

// Activations over n elements.
void silu(const float * x, float * y, size_t n);                     // x * sigmoid(x)
void gelu(const float * x, float * y, size_t n);                     // ggml's tanh approximation via its fp16 table
void swiglu(const float * gate, const float * up, float * y, size_t n);   // silu(gate) * up

// Arithmetic over n elements.
void add(const float * a, const float * b, float * y, size_t n);     // y = a + b
void mul(const float * a, const float * b, float * y, size_t n);     // y = a * b
inline void add(float * x, const float * b, size_t n) { add(x, b, x, n); }   // x += b
inline void mul(float * x, const float * b, size_t n) { mul(x, b, x, n); }   // x *= b

// x[t][i] += b[i] for every row t (biases).
void add_row(float * x, const float * b, int64_t n_tokens, int64_t n);

}  // namespace hearth::kernels
