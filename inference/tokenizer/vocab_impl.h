// vocab::impl: the validated tables behind a vocab, shared by the files that build and use
// it (vocab.cpp builds, tokenize.cpp / spm.cpp / bpe.cpp encode, piece() decodes).
// Private to inference/tokenizer/.
// Thread-safety: immutable after vocab::create, except word_cache (guarded by its mutex).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "inference/tokenizer/pre_tokenizer.h"
#include "inference/tokenizer/token_index.h"
#include "inference/tokenizer/vocab.h"

namespace hearth::inference::tokenizer {

// Token attributes, as llama.cpp derives them from token types (plus strip flags).
enum token_attr : uint16_t {
    attr_undefined = 0,
    attr_unknown = 1 << 0,
    attr_unused = 1 << 1,
    attr_normal = 1 << 2,
    attr_control = 1 << 3,
    attr_user_defined = 1 << 4,
    attr_byte = 1 << 5,
    attr_lstrip = 1 << 7,   // a matched special token swallows whitespace before it
    attr_rstrip = 1 << 8,   // ... and after it
};

struct string_hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

struct token_entry {
    std::string text;
    float score = 0.0f;
    uint16_t attr = attr_normal;
};

// A BPE merge of two adjacent symbols (by token id). `merged` is a token id, or an id at or
// past n_tokens naming merged_bytes[id - n_tokens] when the merged text is not a token.
struct bpe_merge {
    int32_t rank;
    token_id merged;
};

// (left id, right id) -> merge: open addressing, no per-entry allocation, one probe run
// per lookup; the first rule for a pair is kept (llama.cpp keeps the lowest rank).
class merge_table {
public:
    void reserve(size_t n) {
        size_t cap = 16;
        while (cap < 2 * n) cap *= 2;
        slots_.assign(cap, slot{});
    }
    void insert(token_id a, token_id b, bpe_merge m) {
        const uint64_t key = pack(a, b);
        for (size_t i = mix(key) & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
            if (slots_[i].m.rank < 0) {
                slots_[i] = {key, m};
                return;
            }
            if (slots_[i].key == key) return;
        }
    }
    const bpe_merge * find(token_id a, token_id b) const {
        if (slots_.empty()) return nullptr;
        const uint64_t key = pack(a, b);
        for (size_t i = mix(key) & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
            if (slots_[i].m.rank < 0) return nullptr;
            if (slots_[i].key == key) return &slots_[i].m;
        }
    }

private:
    struct slot {
        uint64_t key = 0;
        bpe_merge m{-1, -1};
    };
    static uint64_t pack(token_id a, token_id b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
    static uint64_t mix(uint64_t k) {   // splitmix64 finalizer: ids are dense, spread them
        k ^= k >> 30;
        k *= 0xbf58476d1ce4e5b9ull;
        k ^= k >> 27;
        k *= 0x94d049bb133111ebull;
        return k ^ (k >> 31);
    }
    std::vector<slot> slots_;   // power-of-two size, at most half full
};

class word_cache {
public:
    bool find(std::string_view word, std::vector<token_id> & out) const;
    void insert(std::string_view word, const std::vector<token_id> & ids) const;

private:
    static constexpr size_t k_max_entries = 1 << 16;
    mutable std::mutex mutex_;
    mutable std::unordered_map<std::string, std::vector<token_id>, string_hash, std::equal_to<>> map_;
};

struct vocab::impl {
    vocab_kind kind = vocab_kind::spm;
    std::string model, pre, name;
    std::vector<token_entry> tokens;
    token_index text_to_id;
    std::vector<std::string> pieces;   // piece(id) for rendered tokens, precomputed

    token_id bos = k_no_token, eos = k_no_token, eot = k_no_token, eom = k_no_token;
    token_id unk = k_no_token, sep = k_no_token, pad = k_no_token, mask = k_no_token;
    token_id fim_pre = k_no_token, fim_suf = k_no_token, fim_mid = k_no_token;
    token_id fim_pad = k_no_token, fim_rep = k_no_token, fim_sep = k_no_token;
    bool fim_from_keys = false;   // prefix, suffix and middle all set by tokenizer.ggml.* keys
    token_id linefeed = k_no_token;
    bool add_bos = false, add_eos = false, add_space_prefix = false;
    bool ignore_merges = false;   // BPE: a pre-token that is itself a token is not merged
    std::vector<token_id> eog;    // ascending

    // Tokens split out of the text before encoding, longest first (llama.cpp's order):
    // user-defined ones always, control/unknown ones only with parse_special.
    std::vector<token_id> special_always;
    std::vector<token_id> special_parsed;

    // SPM: the <0xHH> token of each byte. BPE: the token spelling each byte, or k_no_token
    // for a byte the vocabulary lacks (only C0, C1, F1..FF may be missing).
    std::array<token_id, 256> byte_token{};

    // SPM only: ASCII bytes that no token longer than one byte contains ('\n' in Llama's
    // vocabulary). No merge can cross them, so the text is encoded between them, line by
    // line for source code, with the same result as one pass over the whole text.
    std::array<bool, 128> spm_isolated{};

    // BPE only.
    merge_table merges;
    std::vector<std::string> merged_bytes;            // raw bytes of merges outside the vocabulary
    std::optional<pre_tokenizer> pre_tok;
    word_cache cache;

    int32_t n_tokens() const { return int32_t(tokens.size()); }
    token_id find(std::string_view text) const { return text_to_id.find(text); }
    // Encoders produce only tokens whose piece is their text: normal and user-defined ones.
    // A control, unknown, unused or byte token reached by merging would decode to something
    // else (or nothing), so such a text stays split, as SentencePiece and Hugging Face do.
    bool mergeable(token_id id) const {
        const uint16_t a = tokens[size_t(id)].attr;
        return (a & (attr_normal | attr_user_defined)) && !(a & (attr_control | attr_unknown | attr_unused));
    }
    token_id find_mergeable(std::string_view text) const {
        const token_id id = find(text);
        return id != k_no_token && mergeable(id) ? id : k_no_token;
    }
};

// Encoders for one run of plain text (no special tokens inside), appending to `out`.
void spm_encode(const vocab::impl & v, std::string_view text, std::vector<token_id> & out);
void bpe_encode(const vocab::impl & v, std::string_view text, std::vector<token_id> & out);

}  // namespace hearth::inference::tokenizer
