// vocab: a model's tokenizer, built only from its GGUF metadata. Text to token ids with
// SentencePiece-style merging (tokenizer.ggml.model = "llama") or byte-level BPE ("gpt2")
// with the pre-tokenizer llama.cpp selects by tokenizer.ggml.pre; ids back to bytes; the
// special ids (BOS/EOS/EOT, FIM, end-of-generation set) as llama.cpp decides them.
// Invariants after create(): every token text is non-empty, unique and bounded; every byte
// has a token (so any input, even invalid UTF-8, encodes); every special id is in range.
// Thread-safety: immutable after create(), except an internal word cache guarded by a
// mutex; all const member functions may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "inference/tokenizer/vocab_data.h"

namespace hearth::inference {

using token_id = int32_t;
inline constexpr token_id k_no_token = -1;

namespace gguf { class gguf_file; }

namespace tokenizer {

enum class vocab_kind { spm, bpe };

// Longest token text accepted, in bytes (real vocabularies stay under 1 KiB).
inline constexpr size_t k_max_token_bytes = 4096;

class vocab {
public:
    static result<vocab> create(vocab_data data);

    vocab(vocab &&) noexcept;
    vocab & operator=(vocab &&) noexcept;
    ~vocab();

    // add_special: BOS/EOS as the model's add_bos/add_eos flags say.
    // parse_special: control tokens written in the text (e.g. "<|fim_prefix|>") become their
    // ids; without it they are plain text. User-defined tokens are always matched, as
    // llama.cpp does.
    std::vector<token_id> tokenize(std::string_view text, bool add_special, bool parse_special) const;

    // The bytes a token stands for: BPE symbols back to bytes, SPM "▁" to a space, <0xHH>
    // to its byte. Control and unknown tokens give "" unless render_special. Out-of-range
    // ids give "".
    std::string piece(token_id id, bool render_special = false) const;

    // Concatenated pieces. Without BOS in front, the space SPM put before the text
    // (add_space_prefix) is removed again. remove_special drops a leading BOS / trailing EOS
    // the flags would have added.
    std::string detokenize(std::span<const token_id> ids, bool remove_special = false,
                           bool render_special = false) const;

    vocab_kind kind() const;
    std::string_view model() const;      // tokenizer.ggml.model
    std::string_view pre() const;        // tokenizer.ggml.pre
    int32_t n_tokens() const;
    std::string_view token_text(token_id id) const;   // "" when out of range
    token_type type(token_id id) const;
    float score(token_id id) const;
    token_id find_token(std::string_view text) const;   // k_no_token when absent
    bool is_control(token_id id) const;                 // control or unknown: not rendered
    bool is_eog(token_id id) const;
    std::span<const token_id> eog_ids() const;          // ascending

    // k_no_token when the model has none.
    token_id bos() const;
    token_id eos() const;
    token_id eot() const;
    token_id eom() const;
    token_id unk() const;
    token_id sep() const;
    token_id pad() const;
    token_id linefeed() const;
    token_id fim_pre() const;
    token_id fim_suf() const;
    token_id fim_mid() const;
    token_id fim_pad() const;
    token_id fim_rep() const;
    token_id fim_sep() const;
    // Whether prefix, suffix and middle were all named by GGUF keys (else found by their texts).
    bool fim_from_keys() const;

    bool add_bos() const;
    bool add_eos() const;
    bool add_space_prefix() const;

    struct impl;

private:
    explicit vocab(std::unique_ptr<impl> p);
    std::unique_ptr<impl> impl_;
};

// Reads tokenizer.ggml.* (and general.name) from a model file and builds the vocabulary;
// the error names the metadata key that is wrong.
result<vocab> load_vocab(const gguf::gguf_file & file);

// The metadata alone, unchecked (what load_vocab hands to vocab::create).
result<vocab_data> read_vocab_data(const gguf::gguf_file & file);

}  // namespace tokenizer
}  // namespace hearth::inference
