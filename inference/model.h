// model: hyperparameters and weight views of a decoder-only transformer, read from a
// validated gguf_file. Weights are never copied: each view points into the mapping, so the
// gguf_file must outlive the model. Everything read from the file is checked here, once:
// counts are bounded and every tensor's type and shape must agree with the hyperparameters,
// or load() names the field or tensor that is wrong.
// Supported architectures: llama (normal RoPE) and qwen2 (NeoX RoPE, Q/K/V biases).
// Thread-safety: immutable after load().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "inference/gguf/gguf_file.h"
#include "kernels/tensor_type.h"

namespace hearth::inference {

enum class rope_kind { normal, neox };

struct hparams {
    std::string arch;
    int32_t n_vocab = 0;
    int32_t n_ctx_train = 0;
    int32_t n_embd = 0;
    int32_t n_layer = 0;
    int32_t n_head = 0;
    int32_t n_head_kv = 0;
    int32_t head_dim = 0;       // per head, for Q, K and V
    int32_t n_ff = 0;
    int32_t n_rot = 0;          // rotated dims per head (<= head_dim)
    float rms_eps = 1e-5f;
    float rope_freq_base = 10000.0f;
    float rope_freq_scale = 1.0f;
    rope_kind rope = rope_kind::normal;

    int32_t n_embd_q() const { return n_head * head_dim; }
    int32_t n_embd_kv() const { return n_head_kv * head_dim; }
};

// A 2-D weight matrix: n_rows rows (output features) of n_cols elements (input features).
struct weight {
    kernels::tensor_type type{};
    const void * data = nullptr;
    int64_t n_cols = 0;
    int64_t n_rows = 0;
    size_t row_bytes = 0;
};

struct layer {
    const float * attn_norm = nullptr;   // [n_embd]
    weight wq, wk, wv, wo;               // [n_embd_q][n_embd], [n_embd_kv][n_embd] x2, [n_embd][n_embd_q]
    const float * bq = nullptr;          // [n_embd_q]   (qwen2 only)
    const float * bk = nullptr;          // [n_embd_kv]  (qwen2 only)
    const float * bv = nullptr;          // [n_embd_kv]  (qwen2 only)
    const float * ffn_norm = nullptr;    // [n_embd]
    weight w_gate, w_up;                 // [n_ff][n_embd]
    weight w_down;                       // [n_embd][n_ff]
};

class model {
public:
    static result<model> load(const gguf::gguf_file & file);

    const hparams & hp() const { return hp_; }
    const weight & token_embd() const { return token_embd_; }   // [n_vocab][n_embd]
    const float * output_norm() const { return output_norm_; }  // [n_embd]
    const weight & output() const { return output_; }           // [n_vocab][n_embd] (token_embd when tied)
    const std::vector<layer> & layers() const { return layers_; }
    uint64_t weight_bytes() const { return weight_bytes_; }

    // The architectures load() accepts, for error messages and `hearth model info`.
    static const std::vector<std::string> & supported_architectures();

private:
    hparams hp_;
    weight token_embd_;
    const float * output_norm_ = nullptr;
    weight output_;
    std::vector<layer> layers_;
    uint64_t weight_bytes_ = 0;
};

}  // namespace hearth::inference
