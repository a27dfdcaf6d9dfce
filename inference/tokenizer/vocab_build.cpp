// vocab::create: validates a vocab_data field by field and builds the lookup tables.
// Every check names the metadata key (and index) at fault, so a bad model file is refused
// at load, never at the first request.
#include <algorithm>
#include <cstdio>

#include "inference/tokenizer/unicode.h"
#include "inference/tokenizer/vocab_impl.h"

namespace hearth::inference::tokenizer {

namespace {

constexpr const char * k_tokens_key = "tokenizer.ggml.tokens";
constexpr const char * k_types_key = "tokenizer.ggml.token_type";
constexpr const char * k_scores_key = "tokenizer.ggml.scores";
constexpr const char * k_merges_key = "tokenizer.ggml.merges";
constexpr size_t k_max_total_bytes = size_t(1) << 30;   // the text pool is indexed by u32

std::string hex2(unsigned b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%02X", b & 0xFFu);
    return buf;
}

// Printable excerpt of a token for error messages (bytes beyond ASCII shown as \xHH).
std::string quoted(std::string_view s) {
    std::string out = "'";
    for (size_t i = 0; i < s.size() && i < 40; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7F) out += char(c);
        else out += "\\x" + hex2(c);
    }
    if (s.size() > 40) out += "...";
    return out + "'";
}

// "<0xHH>" exactly (two hex digits), as SentencePiece writes byte-fallback tokens.
std::optional<uint8_t> parse_byte_token(std::string_view t) {
    if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return std::nullopt;
    auto digit = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    const int hi = digit(t[3]), lo = digit(t[4]);
    if (hi < 0 || lo < 0) return std::nullopt;
    return uint8_t(hi * 16 + lo);
}

uint16_t attr_of(token_type t) {
    switch (t) {
        case token_type::normal: return attr_normal;
        case token_type::unknown: return attr_unknown;
        case token_type::control: return attr_control;
        case token_type::user_defined: return attr_user_defined;
        case token_type::unused: return attr_unused;
        case token_type::byte: return attr_byte;
        case token_type::undefined: break;
    }
    return attr_undefined;
}

struct pre_defaults {
    bool add_bos = false;
    bool ignore_merges = false;
    bool no_bos = false;
};

// Per-pre-tokenizer defaults that llama.cpp sets before reading the add_* keys.
pre_defaults defaults_for_pre(std::string_view pre) {
    pre_defaults d;
    for (const auto name : {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
                            "lfm2", "jina-v5-nano"}) {
        if (pre == name) d.add_bos = d.ignore_merges = true;
    }
    if (pre == "tekken") d.add_bos = d.ignore_merges = true;
    if (pre == "minicpm5") d.ignore_merges = true;
    if (pre == "chatglm-bpe" || pre == "glm4") d.no_bos = true;
    return d;
}

status build_tokens(vocab::impl & v, vocab_data & d) {
    const size_t n = d.tokens.size();
    if (n == 0) return fail(k_tokens_key, ": missing or empty (a vocabulary needs tokens)");
    if (n >= size_t(INT32_MAX) / 2) return fail(k_tokens_key, ": ", uint64_t(n), " tokens, more than a token id can hold");
    if (!d.scores.empty() && d.scores.size() != n) {
        return fail(k_scores_key, ": ", uint64_t(d.scores.size()), " entries for ", uint64_t(n), " tokens (expected one per token)");
    }
    if (!d.token_types.empty() && d.token_types.size() != n) {
        return fail(k_types_key, ": ", uint64_t(d.token_types.size()), " entries for ", uint64_t(n), " tokens (expected one per token)");
    }
    v.tokens.resize(n);
    v.text_to_id.reserve(n);
    size_t total_bytes = 0;
    for (size_t i = 0; i < n; ++i) {
        std::string text = std::move(d.tokens[i]);
        // llama.cpp keeps empty tokens under a placeholder name so ids stay aligned.
        if (text.empty()) text = "[EMPTY_" + std::to_string(i) + "]";
        if (text.size() > k_max_token_bytes) {
            return fail(k_tokens_key, "[", uint64_t(i), "]: ", uint64_t(text.size()), " bytes (at most ",
                        uint64_t(k_max_token_bytes), " expected)");
        }
        token_entry & e = v.tokens[i];
        if (!d.token_types.empty()) {
            const int32_t t = d.token_types[i];
            if (t < 0 || t > 6) {
                return fail(k_types_key, "[", uint64_t(i), "] = ", int64_t(t), " (expected 0..6)");
            }
            e.attr = attr_of(token_type(t));
            if (token_type(t) == token_type::byte && !parse_byte_token(text)) {
                return fail(k_types_key, "[", uint64_t(i), "]: byte token ", quoted(text), " is not of the form <0xHH>");
            }
        }
        e.score = d.scores.empty() ? 0.0f : d.scores[i];
        total_bytes += text.size();
        if (total_bytes > k_max_total_bytes) {
            return fail(k_tokens_key, ": more than ", uint64_t(k_max_total_bytes), " bytes of token text");
        }
        if (const token_id first = v.text_to_id.add(text); first != k_no_token) {
            return fail(k_tokens_key, "[", uint64_t(i), "]: ", quoted(text), " repeats token ", int64_t(first),
                        " (token texts must be unique)");
        }
        e.text = std::move(text);
    }
    return {};
}

status build_byte_tokens(vocab::impl & v) {
    for (unsigned b = 0; b < 256; ++b) {
        token_id id = k_no_token;
        if (v.kind == vocab_kind::spm) {
            id = v.find("<0x" + hex2(b) + ">");
            if (id != k_no_token && !(v.tokens[id].attr & attr_byte)) {
                return fail(k_types_key, "[", int64_t(id), "]: ", quoted(v.tokens[id].text),
                            " must have type byte (6) so it decodes to its byte");
            }
            if (id == k_no_token) {
                return fail(k_tokens_key, ": no byte-fallback token <0x", hex2(b),
                            "> (a SentencePiece vocabulary needs all 256 to encode any input)");
            }
        } else {
            id = v.find_mergeable(byte_to_symbol(uint8_t(b)));
            // Vocabularies learnt from text lack bytes their data never held (starcoder: C0, C1,
            // F1, F5..FF). ASCII, continuation bytes and the lead bytes up to plane 1 (C2..F0) are
            // required; any other missing byte is encoded as U+FFFD (bpe.cpp).
            const bool optional_byte = b == 0xC0 || b == 0xC1 || b >= 0xF1;
            if (id == k_no_token && optional_byte) {
                v.byte_token[b] = k_no_token;
                continue;
            }
            if (id == k_no_token) {
                return fail(k_tokens_key, ": no token spells byte 0x", hex2(b), " as ", quoted(byte_to_symbol(uint8_t(b))),
                            " (a byte-level BPE vocabulary needs every byte 00..BF and C2..F0)");
            }
        }
        v.byte_token[b] = id;
    }
    return {};
}

status build_merges(vocab::impl & v, const vocab_data & d) {
    if (d.merges.empty()) return fail(k_merges_key, ": missing or empty (a BPE vocabulary needs merges)");
    v.merges.reserve(d.merges.size());
    std::string joined;
    for (size_t i = 0; i < d.merges.size(); ++i) {
        const std::string & m = d.merges[i];
        const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
        if (sp == std::string::npos) {
            return fail(k_merges_key, "[", uint64_t(i), "]: ", quoted(m), " is not two token texts separated by a space");
        }
        const std::string_view left(m.data(), sp);
        const std::string_view right(m.data() + sp + 1, m.size() - sp - 1);
        const token_id a = v.find(left);
        const token_id b = v.find(right);
        if (a == k_no_token || b == k_no_token) {
            return fail(k_merges_key, "[", uint64_t(i), "]: ", quoted(m), ": ", quoted(a == k_no_token ? left : right),
                        " is not a token");
        }
        joined.assign(left);
        joined.append(right);
        token_id merged = v.find_mergeable(joined);
        if (merged == k_no_token) {
            // Kept so encoding agrees with llama.cpp, which merges by text alone; a result that
            // is not an ordinary token is spelled out byte by byte.
            auto raw = symbols_to_bytes(joined);
            if (!raw) {
                return fail(k_merges_key, "[", uint64_t(i), "]: ", quoted(m),
                            " joins to a text that is neither a token nor byte-level symbols");
            }
            merged = token_id(v.n_tokens() + int32_t(v.merged_bytes.size()));
            v.merged_bytes.push_back(std::move(*raw));
        }
        // The first (lowest-ranked) rule for a pair wins, as in llama.cpp.
        v.merges.insert(a, b, bpe_merge{int32_t(i), merged});
    }
    return {};
}

struct id_slot {
    std::string_view suffix;   // after "tokenizer.ggml."
    token_id vocab::impl::*field;
};

status apply_special_ids(vocab::impl & v, const vocab_data & d) {
    static const id_slot slots[] = {
        {"bos_token_id", &vocab::impl::bos},           {"eos_token_id", &vocab::impl::eos},
        {"eot_token_id", &vocab::impl::eot},           {"eom_token_id", &vocab::impl::eom},
        {"unknown_token_id", &vocab::impl::unk},       {"seperator_token_id", &vocab::impl::sep},
        {"padding_token_id", &vocab::impl::pad},       {"mask_token_id", &vocab::impl::mask},
        {"fim_pre_token_id", &vocab::impl::fim_pre},   {"fim_suf_token_id", &vocab::impl::fim_suf},
        {"fim_mid_token_id", &vocab::impl::fim_mid},   {"fim_pad_token_id", &vocab::impl::fim_pad},
        {"fim_rep_token_id", &vocab::impl::fim_rep},   {"fim_sep_token_id", &vocab::impl::fim_sep},
        {"prefix_token_id", &vocab::impl::fim_pre},    {"suffix_token_id", &vocab::impl::fim_suf},
        {"middle_token_id", &vocab::impl::fim_mid},
    };
    // Defaults that fall outside a small vocabulary mean "none", as in llama.cpp.
    for (const auto & s : slots) {
        token_id & id = v.*s.field;
        if (id >= v.n_tokens()) id = k_no_token;
    }
    for (const auto & s : slots) {   // in this order: the older prefix/suffix/middle keys win
        const std::string key = "tokenizer.ggml." + std::string(s.suffix);
        for (const auto & e : d.special_ids) {
            if (e.key != key) continue;
            if (e.value == -1 || e.value == 0xFFFFFFFFll) continue;   // written as "none"
            if (e.value < 0 || e.value >= v.n_tokens()) {
                return fail(key, " = ", e.value, " is outside the vocabulary (", int64_t(v.n_tokens()), " tokens)");
            }
            v.*s.field = token_id(e.value);
        }
    }
    v.fim_from_keys = v.fim_pre != k_no_token && v.fim_suf != k_no_token && v.fim_mid != k_no_token;
    return {};
}

}  // namespace

// Text-detected special tokens, the end-of-generation set and per-model attributes; then
// the piece cache and the newline token once the tables are complete (vocab_special.cpp).
void detect_special_tokens(vocab::impl & v);
void finish_vocab(vocab::impl & v);

result<vocab> vocab::create(vocab_data d) {
    auto p = std::make_unique<impl>();
    impl & v = *p;
    v.model = d.model;
    v.pre = d.pre;
    v.name = d.name;
    if (d.model == "llama") {
        v.kind = vocab_kind::spm;
        v.bos = 1;
        v.eos = 2;
        v.unk = 0;
        v.add_bos = true;
        v.add_space_prefix = true;
    } else if (d.model == "gpt2") {
        v.kind = vocab_kind::bpe;
        v.bos = 11;   // llama.cpp's BPE defaults, used only when the file names none
        v.eos = 11;
        const pre_defaults pd = defaults_for_pre(d.pre);
        v.add_bos = pd.add_bos;
        v.ignore_merges = pd.ignore_merges;
        if (pd.no_bos) v.bos = k_no_token;
        auto pt = pre_tokenizer::create(d.pre);
        if (!pt) return pt.error();
        v.pre_tok.emplace(std::move(*pt));
    } else {
        return fail("tokenizer.ggml.model: '", d.model, "' is not supported (expected \"llama\" or \"gpt2\")");
    }

    if (auto s = build_tokens(v, d); !s) return s.error();
    if (auto s = build_byte_tokens(v); !s) return s.error();
    if (auto s = apply_special_ids(v, d); !s) return s.error();
    detect_special_tokens(v);   // may turn tokens into control ones, so before the merge table
    if (v.kind == vocab_kind::bpe) {
        if (auto s = build_merges(v, d); !s) return s.error();
    } else {
        // Spaces are written as U+2581 before encoding; without a token for it they would come
        // back as its three bytes instead of a space.
        const token_id mark = v.find("\xE2\x96\x81");
        if (mark == k_no_token || !(v.tokens[mark].attr & attr_normal)) {
            return fail(k_tokens_key, ": no normal token '\xE2\x96\x81' (U+2581), which a SentencePiece vocabulary writes for every space");
        }
        v.spm_isolated.fill(true);
        for (const auto & e : v.tokens) {
            if (e.text.size() < 2) continue;
            for (const char c : e.text) {
                if (static_cast<unsigned char>(c) < 0x80) v.spm_isolated[size_t(c)] = false;
            }
        }
    }

    if (d.add_bos) v.add_bos = *d.add_bos;
    if (d.add_eos) v.add_eos = *d.add_eos;
    if (d.add_space_prefix && v.kind == vocab_kind::spm) v.add_space_prefix = *d.add_space_prefix;
    if (v.add_bos && v.bos == k_no_token) {
        return fail("tokenizer.ggml.add_bos_token: BOS is to be added but the vocabulary has no BOS token");
    }
    if (v.add_eos && v.eos == k_no_token) {
        return fail("tokenizer.ggml.add_eos_token: EOS is to be added but the vocabulary has no EOS token");
    }

    finish_vocab(v);
    return vocab(std::move(p));
}

}  // namespace hearth::inference::tokenizer
