// load_vocab: the thin adapter from a model file's metadata to vocab_data.
#include "inference/gguf/gguf_file.h"
#include "inference/tokenizer/vocab.h"

namespace hearth::inference::tokenizer {

namespace {

constexpr const char * k_id_keys[] = {
    "tokenizer.ggml.bos_token_id",     "tokenizer.ggml.eos_token_id",       "tokenizer.ggml.eot_token_id",
    "tokenizer.ggml.eom_token_id",     "tokenizer.ggml.unknown_token_id",   "tokenizer.ggml.seperator_token_id",
    "tokenizer.ggml.padding_token_id", "tokenizer.ggml.mask_token_id",      "tokenizer.ggml.fim_pre_token_id",
    "tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.fim_mid_token_id",   "tokenizer.ggml.fim_pad_token_id",
    "tokenizer.ggml.fim_rep_token_id", "tokenizer.ggml.fim_sep_token_id",   "tokenizer.ggml.prefix_token_id",
    "tokenizer.ggml.suffix_token_id",  "tokenizer.ggml.middle_token_id",
};

status read_strings(const gguf::gguf_file & f, const char * key, std::vector<std::string> & out) {
    auto r = f.get_string_array(key);
    if (!r) return r.error();
    if (*r) out.assign((**r).begin(), (**r).end());
    return {};
}

status read_flag(const gguf::gguf_file & f, const char * key, std::optional<bool> & out) {
    auto r = f.get_bool(key);
    if (!r) return r.error();
    out = *r;
    return {};
}

}  // namespace

result<vocab_data> read_vocab_data(const gguf::gguf_file & f) {
    vocab_data d;
    {
        auto r = f.get_string("tokenizer.ggml.model");
        if (!r) return r.error();
        if (!*r) return fail("tokenizer.ggml.model: missing (the file has no tokenizer)");
        d.model = std::string(**r);
    }
    {
        auto r = f.get_string("tokenizer.ggml.pre");
        if (!r) return r.error();
        if (*r) d.pre = std::string(**r);
    }
    {
        auto r = f.get_string("general.name");
        if (r && *r) d.name = std::string(**r);   // informational only: a bad type is ignored
    }
    if (auto s = read_strings(f, "tokenizer.ggml.tokens", d.tokens); !s) return s.error();
    if (auto s = read_strings(f, "tokenizer.ggml.merges", d.merges); !s) return s.error();
    {
        // llama.cpp accepts integer scores as well as f32 ones.
        auto r = f.get_f32_array("tokenizer.ggml.scores");
        if (r) {
            if (*r) d.scores = std::move(**r);
        } else {
            auto ri = f.get_int_array("tokenizer.ggml.scores");
            if (!ri) return r.error();
            if (*ri) for (const int64_t s : **ri) d.scores.push_back(float(s));
        }
    }
    {
        auto r = f.get_int_array("tokenizer.ggml.token_type");
        if (!r) return r.error();
        if (*r) {
            d.token_types.reserve((**r).size());
            for (size_t i = 0; i < (**r).size(); ++i) {
                const int64_t t = (**r)[i];
                if (t < INT32_MIN || t > INT32_MAX) {
                    return fail("tokenizer.ggml.token_type[", uint64_t(i), "] = ", t, " (expected 0..6)");
                }
                d.token_types.push_back(int32_t(t));
            }
        }
    }
    for (const char * key : k_id_keys) {
        auto r = f.get_int(key);
        if (!r) return r.error();
        if (*r) d.special_ids.push_back({key, **r});
    }
    if (auto s = read_flag(f, "tokenizer.ggml.add_bos_token", d.add_bos); !s) return s.error();
    if (auto s = read_flag(f, "tokenizer.ggml.add_eos_token", d.add_eos); !s) return s.error();
    if (auto s = read_flag(f, "tokenizer.ggml.add_space_prefix", d.add_space_prefix); !s) return s.error();
    return d;
}

result<vocab> load_vocab(const gguf::gguf_file & f) {
    auto d = read_vocab_data(f);
    if (!d) return d.error();
    return vocab::create(std::move(*d));
}

}  // namespace hearth::inference::tokenizer
