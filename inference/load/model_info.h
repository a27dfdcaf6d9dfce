// model_info: what a GGUF model is and what it costs to run, computed from the file alone
// (metadata and tensor table; no table of known models). `hearth model info` prints it and
// the daemon can use the same numbers for its memory budget.
// KV cache cost: per token each layer stores K and V for every KV head, each head a row of
// head_dim values quantized in blocks, so a block type needs head_dim % block_size == 0.
// Peak RAM = mapped weights + cached file slots * n_ctx * KV bytes/token + compute buffers
// (estimate for one prefill batch; see compute_estimate).
// Thread-safety: plain values and a pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "inference/cache/kv_cache.h"
#include "inference/gguf/gguf_file.h"
#include "kernels/tensor_type.h"

namespace hearth::inference {

struct fim_token {
    uint32_t id = 0;
    std::string text;
};

struct fim_tokens {
    std::optional<fim_token> prefix, suffix, middle;
    std::string source;  // "metadata" (tokenizer.ggml.fim_*_token_id) or "token texts"
    bool complete() const { return prefix && suffix && middle; }
};

struct tensor_type_usage {
    std::string type;        // "q4_K", "f32", ...
    uint64_t n_tensors = 0;
    uint64_t n_elements = 0;
    uint64_t size_bytes = 0;
};

struct kv_cache_cost {
    std::string type;                         // "f16", "f16/q8_0" (K/V), "q8_0", "q4_0"
    // A quantized K of this model is stored smoothed (k_smoothing.h: the model has K biases
    // without a norm after them); the bytes are the same.
    bool k_smoothed = false;
    std::optional<uint64_t> bytes_per_token;  // nullopt: the type cannot hold this model's heads
    std::optional<uint64_t> bytes_model_ctx;  // for the model's own context length
    std::string why_not;                      // set when bytes_per_token is nullopt
};

// Working memory of the forward pass for one batch, in bytes, by part.
struct compute_estimate {
    uint64_t activations = 0;   // f32 hidden state, norms, q/k/v, attention output, FFN gate/up per batch token
    uint64_t quantized_input = 0;  // activations converted to the weights' dot type (<= 1 byte/value + scales)
    uint64_t attention_scores = 0; // f32 scores for every head over the whole context, per batch token
    uint64_t logits = 0;        // f32 logits for one token
    uint64_t total() const { return activations + quantized_input + attention_scores + logits; }
};

struct memory_estimate {
    uint64_t n_ctx = 0;
    uint64_t n_files = 0;
    uint64_t n_batch = 0;
    std::string kv_type;           // the cache type the estimate assumes
    uint64_t weights_bytes = 0;    // mapped tensor data
    uint64_t kv_bytes = 0;         // n_files * n_ctx * bytes/token
    compute_estimate compute;
    uint64_t total_bytes() const { return weights_bytes + kv_bytes + compute.total(); }
};

struct memory_options {
    uint64_t n_ctx = 4096;          // capped at the model's context length
    uint64_t n_files = 4;           // cached file slots, each with its own KV cache
    uint64_t n_batch = 512;         // prefill batch
    // The daemon's default cache types (kv_cache.h, tested); q8_0 / q4_0 fall back to f16 where
    // they cannot hold the heads.
    kv_types kv_type;
};

struct model_info {
    std::string path;               // as given; empty for in-memory files
    uint32_t gguf_version = 0;
    uint64_t file_size = 0;
    std::string architecture;
    std::string name;               // general.name, if any
    uint64_t n_params = 0;          // sum of tensor elements
    uint64_t n_tensors = 0;
    uint64_t weights_bytes = 0;     // tensor data, what is mapped for the weights
    std::vector<tensor_type_usage> tensor_types;  // by type, largest first

    uint64_t n_ctx_train = 0;       // <arch>.context_length (0: absent)
    uint64_t n_layer = 0;
    uint64_t n_embd = 0;
    uint64_t n_ff = 0;
    uint64_t n_head = 0;
    uint64_t n_head_kv = 0;
    uint64_t head_dim_k = 0;        // <arch>.attention.key_length, else n_embd / n_head
    uint64_t head_dim_v = 0;        // <arch>.attention.value_length, else head_dim_k
    uint64_t n_vocab = 0;

    std::string tokenizer_model;    // tokenizer.ggml.model
    std::string tokenizer_pre;      // tokenizer.ggml.pre
    fim_tokens fim;
    std::string fim_format;         // the FIM family completions use ("none": a plain continuation of the prefix)
    std::string fim_format_reason;  // why: the GGUF keys or token texts and whose tokens they are
    bool has_chat_template = false;
    uint64_t chat_template_bytes = 0;
    std::string chat_format;        // what `hearth chat` uses ("" when none fits)
    std::string chat_format_reason; // why: the template's markers or the vocabulary's tokens, or why none

    std::vector<kv_cache_cost> kv_costs;  // f16, f16/q8_0, q8_0/f16, q8_0, q4_0
    memory_estimate memory;
    std::vector<std::string> notes;       // hparams that were missing or odd, said plainly
};

// Describes `file`; an error only for metadata of the wrong type (named in the message).
result<model_info> describe_model(const gguf::gguf_file & file, const memory_options & opts = {});

// KV bytes per token for these types, or nullopt when head_dim_k (head_dim_v) is not a multiple
// of K's (V's) block.
std::optional<uint64_t> kv_bytes_per_token(const kv_types & types, uint64_t n_layer, uint64_t n_head_kv,
                                           uint64_t head_dim_k, uint64_t head_dim_v);

}  // namespace hearth::inference
