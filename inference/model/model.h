// model: hyperparameters and weight views of a decoder-only transformer, read from a
// validated gguf_file. Weights are never copied: each view points into the mapping, so the
// gguf_file must outlive the model. Everything read from the file is checked here, once:
// counts are bounded and every tensor's type and shape must agree with the hyperparameters,
// or load() names the field or tensor that is wrong.
// Supported architectures, each as llama.cpp's GGUF conversion writes it:
//   llama  normal RoPE
//   qwen2  NeoX RoPE, Q/K/V biases
//   qwen3  NeoX RoPE, RMS norms on each head of Q and K, no biases
//   starcoder2 NeoX RoPE, LayerNorm with bias, biases on every projection, a GELU MLP
//          without a gate
//   gemma3 NeoX RoPE, embeddings scaled by sqrt(n_embd), Q/K head norms, norms after the
//          attention and the FFN, GELU-gated FFN, sliding-window layers (their own RoPE base)
//          interleaved with global ones, output tied to the embeddings
//   phi3   NeoX RoPE (with long/short frequency factors on the 128k models), Q, K and V in
//          one fused matrix and gate and up in another, Q scaled before the attention
//   qwen3moe qwen3 whose FFN is a mixture of experts: a router picks n_expert_used of
//          n_expert SwiGLU experts per token (inference/graph/moe.h)
//   granite llama with four multipliers: embeddings, each block's output before its residual
//          add, the attention scores, and the logits
// Any architecture may store Q, K and V fused (attn_qkv), as llama.cpp accepts it; the loader
// splits the fused matrix into row ranges, so the forward pass sees three matrices either way.
// Thread-safety: immutable after load().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "inference/gguf/gguf_file.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/tensor_type.h"

namespace hearth::inference {

enum class rope_kind { normal, neox };
enum class ffn_activation { silu, gelu };   // gated: act(gate) * up; without a gate: act(up)
enum class norm_kind { rms, layer };        // RMS norm, or LayerNorm (mean and variance) with a bias

struct hparams {
    std::string arch;
    int32_t n_vocab = 0;
    int32_t n_ctx_train = 0;
    int32_t n_embd = 0;
    int32_t n_layer = 0;
    int32_t n_head = 0;
    int32_t n_head_kv = 0;
    int32_t head_dim = 0;       // per head, for Q, K and V
    int32_t n_ff = 0;           // the FFN's hidden width (an expert's, expert_feed_forward_length, with experts)
    int32_t n_expert = 0;       // 0: a dense FFN
    int32_t n_expert_used = 0;  // experts per token
    int32_t n_rot = 0;          // rotated dims per head (<= head_dim)
    float rms_eps = 1e-5f;      // the norms' epsilon (attention.layer_norm_epsilon for LayerNorm)
    norm_kind norm = norm_kind::rms;
    float rope_freq_base = 10000.0f;
    float rope_freq_scale = 1.0f;
    rope_kind rope = rope_kind::normal;
    ffn_activation act = ffn_activation::silu;
    float embd_scale = 1.0f;    // token embeddings are multiplied by this (gemma: sqrt(n_embd))
    float kq_scale = 0.0f;      // attention score scale (1 / sqrt(head_dim) unless the architecture says)
    float q_scale = 1.0f;       // Q is multiplied by this before the attention (gemma3, as llama.cpp
                                // does it: its f16 rounding of Q then sees the scaled values)
    // Sliding-window attention: a token of a layer marked in swa_layers sees the n_swa
    // positions up to and including its own (llama.cpp: masked when p - p_kv >= n_swa), and
    // those layers rotate with their own RoPE base and scale.
    int32_t n_swa = 0;                  // 0: every layer attends to the whole context
    std::vector<uint8_t> swa_layers;    // [n_layer] 1 where the layer uses the window
    float rope_freq_base_swa = 10000.0f;
    float rope_freq_scale_swa = 1.0f;
    // RoPE frequency factors, views into the file like the weights: llama3's rope_freqs, or
    // phi3's short factors with its long ones for a context past n_ctx_orig (llama.cpp's rule).
    const float * rope_factors = nullptr;        // [n_rot / 2]
    const float * rope_factors_long = nullptr;   // [n_rot / 2]
    int32_t n_ctx_orig = 0;                      // rope.scaling.original_context_length
    float rope_attn_factor = 1.0f;               // rope.scaling.attn_factor
    float residual_scale = 1.0f;   // granite: each block's output times this before the residual add
    float logit_scale = 1.0f;      // the logits times this (granite: 1 / logit_scale)

    int32_t n_embd_q() const { return n_head * head_dim; }
    int32_t n_embd_kv() const { return n_head_kv * head_dim; }
    bool is_swa(int32_t il) const { return n_swa > 0 && swa_layers[static_cast<size_t>(il)] != 0; }
    // The RoPE of layer il for a cache of n_ctx positions (base and scale differ on
    // sliding-window layers; the context picks phi3's factors).
    kernels::rope_params rope_for_layer(int32_t il, int32_t n_ctx) const;
};

// A 2-D weight matrix: n_rows rows (output features) of n_cols elements (input features).
struct weight {
    kernels::tensor_type type{};
    const void * data = nullptr;
    int64_t n_cols = 0;
    int64_t n_rows = 0;
    size_t row_bytes = 0;

    kernels::weight_view view() const { return {type, data, n_rows, n_cols, row_bytes}; }
};

struct layer {
    const float * attn_norm = nullptr;   // [n_embd]
    const float * attn_norm_b = nullptr; // [n_embd] (LayerNorm only)
    weight wq, wk, wv, wo;               // [n_embd_q][n_embd], [n_embd_kv][n_embd] x2, [n_embd][n_embd_q]
    const float * bq = nullptr;          // [n_embd_q]   (qwen2 only)
    const float * bk = nullptr;          // [n_embd_kv]  (qwen2 only)
    const float * bv = nullptr;          // [n_embd_kv]  (qwen2 only)
    const float * q_norm = nullptr;      // [head_dim]   (qwen3, gemma3) RMS norm of each Q head
    const float * k_norm = nullptr;      // [head_dim]   (qwen3, gemma3) RMS norm of each K head
    const float * attn_post_norm = nullptr;   // [n_embd] (gemma3) norm of the attention output
    const float * bo = nullptr;          // [n_embd]     (starcoder2) attention output bias
    const float * ffn_norm = nullptr;    // [n_embd]
    const float * ffn_norm_b = nullptr;  // [n_embd] (LayerNorm only)
    weight w_gate, w_up;                 // [n_ff][n_embd]; w_gate.data is null for an MLP without a gate
    weight w_down;                       // [n_embd][n_ff]
    const float * b_up = nullptr;        // [n_ff]       (starcoder2)
    const float * b_down = nullptr;      // [n_embd]     (starcoder2)
    const float * ffn_post_norm = nullptr;    // [n_embd] (gemma3) norm of the FFN output
    // Experts (qwen3moe; ffn_gate_inp.data is null for a dense FFN): expert e's matrix is rows
    // [e * n, (e + 1) * n) of its stacked tensor (n = n_ff for gate and up, n_embd for down).
    weight ffn_gate_inp;                 // [n_expert][n_embd] the router
    weight ffn_gate_exps, ffn_up_exps;   // [n_expert * n_ff][n_embd]
    weight ffn_down_exps;                // [n_expert * n_embd][n_ff]
};

class model {
public:
    static result<model> load(const gguf::gguf_file & file);

    const hparams & hp() const { return hp_; }
    const weight & token_embd() const { return token_embd_; }   // [n_vocab][n_embd]
    const float * output_norm() const { return output_norm_; }  // [n_embd]
    const float * output_norm_b() const { return output_norm_b_; }   // [n_embd] (LayerNorm only)
    const weight & output() const { return output_; }           // [n_vocab][n_embd] (token_embd when tied)
    const std::vector<layer> & layers() const { return layers_; }
    uint64_t weight_bytes() const { return weight_bytes_; }

    // The architectures load() accepts, for error messages and `hearth model info`.
    static const std::vector<std::string> & supported_architectures();

private:
    hparams hp_;
    weight token_embd_;
    const float * output_norm_ = nullptr;
    const float * output_norm_b_ = nullptr;
    weight output_;
    std::vector<layer> layers_;
    uint64_t weight_bytes_ = 0;
};

}  // namespace hearth::inference
