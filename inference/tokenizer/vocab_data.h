// vocab_data: a tokenizer vocabulary as GGUF metadata states it (tokenizer.ggml.*), before
// any checking. load_vocab() fills it from a gguf_file; tests build it by hand. vocab::create
// validates every field, since all of it is untrusted input.
// Thread-safety: a plain value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth::inference::tokenizer {

// llama.cpp's token types (tokenizer.ggml.token_type), numbered as GGUF stores them.
enum class token_type : int32_t {
    undefined = 0, normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6,
};

// One special-token id as stored (u32 in GGUF) under its full key, e.g.
// {"tokenizer.ggml.bos_token_id", 1}. 0xFFFFFFFF (and -1) mean "none set", as llama.cpp
// writes it, so the default stays. Keys: bos, eos, eot, eom, unknown, seperator (sic),
// padding, mask, fim_pre, fim_suf, fim_mid, fim_pad, fim_rep, fim_sep (each "_token_id"),
// and the older prefix/suffix/middle_token_id, which win over fim_pre/suf/mid as in llama.cpp.
struct special_id_entry {
    std::string key;
    int64_t value;
};

struct vocab_data {
    std::string model;                     // tokenizer.ggml.model: "llama" (SPM) or "gpt2" (BPE)
    std::string pre;                       // tokenizer.ggml.pre ("" when absent)
    std::string name;                      // general.name (a few token attributes key on it)
    std::vector<std::string> tokens;       // tokenizer.ggml.tokens
    std::vector<float> scores;             // tokenizer.ggml.scores, empty when absent
    std::vector<int32_t> token_types;      // tokenizer.ggml.token_type, empty when absent
    std::vector<std::string> merges;       // tokenizer.ggml.merges ("left right"), BPE only
    std::vector<special_id_entry> special_ids;
    std::optional<bool> add_bos;           // tokenizer.ggml.add_bos_token
    std::optional<bool> add_eos;           // tokenizer.ggml.add_eos_token
    std::optional<bool> add_space_prefix;  // tokenizer.ggml.add_space_prefix
};

}  // namespace hearth::inference::tokenizer
