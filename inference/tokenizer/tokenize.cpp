// vocab::tokenize: split special tokens out of the text (longest token first, as llama.cpp's
// tokenizer_st_partition does), then encode each run of plain text with SPM or BPE.
#include <cctype>

#include "inference/tokenizer/vocab_impl.h"

namespace hearth::inference::tokenizer {

namespace {

struct fragment {
    token_id token;     // k_no_token: plain text
    size_t offset;
    size_t length;
};

bool is_c_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Splits every plain fragment around each occurrence of one special token.
void split_on(const vocab::impl & v, token_id special, std::string_view text, std::vector<fragment> & frags,
              std::vector<fragment> & scratch) {
    const std::string & needle = v.tokens[special].text;
    const uint16_t attr = v.tokens[special].attr;
    scratch.clear();
    bool found_any = false;
    for (const fragment & f : frags) {
        if (f.token != k_no_token) {
            scratch.push_back(f);
            continue;
        }
        size_t pos = f.offset;
        const size_t end = f.offset + f.length;
        while (pos < end) {
            const size_t match = text.substr(0, end).find(needle, pos);
            if (match == std::string_view::npos) break;
            found_any = true;
            size_t left_len = match - pos;
            if (attr & attr_lstrip) {
                while (left_len > 0 && is_c_space(text[pos + left_len - 1])) --left_len;
            }
            if (left_len > 0) scratch.push_back({k_no_token, pos, left_len});
            scratch.push_back({special, match, needle.size()});
            pos = match + needle.size();
            if (attr & attr_rstrip) {
                while (pos < end && is_c_space(text[pos])) ++pos;
            }
        }
        if (pos < end) scratch.push_back({k_no_token, pos, end - pos});
    }
    if (found_any) frags.swap(scratch);
}

void escape_spaces(std::string & out, std::string_view text) {
    for (const char c : text) {
        if (c == ' ') out += "\xE2\x96\x81";   // U+2581, SentencePiece's word boundary mark
        else out += c;
    }
}

// The encoders index text with 32-bit offsets. Runs longer than this (never met in source
// code) are cut after a newline, or else at a character boundary, and encoded in turn.
constexpr size_t k_max_run = size_t(1) << 28;

template <class F>
void for_each_run(std::string_view text, F && f) {
    while (text.size() > k_max_run) {
        size_t cut = text.rfind('\n', k_max_run - 1);
        if (cut == std::string_view::npos || cut == 0) {
            cut = k_max_run;
            while (cut > 1 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
        } else {
            cut += 1;
        }
        f(text.substr(0, cut));
        text.remove_prefix(cut);
    }
    f(text);
}

void encode(const vocab::impl & v, std::string_view text, const std::vector<fragment> & frags,
            std::vector<token_id> & out) {
    if (v.kind == vocab_kind::bpe) {
        for (const fragment & f : frags) {
            if (f.token != k_no_token) out.push_back(f.token);
            else for_each_run(text.substr(f.offset, f.length), [&](std::string_view run) { bpe_encode(v, run, out); });
        }
        return;
    }
    // SPM puts a space before text that starts the input or follows a special token.
    bool prev_special = true;
    std::string escaped;
    for (const fragment & f : frags) {
        if (f.token != k_no_token) {
            out.push_back(f.token);
            prev_special = true;
            continue;
        }
        for_each_run(text.substr(f.offset, f.length), [&](std::string_view run) {
            escaped.clear();
            if (v.add_space_prefix && prev_special) escaped += "\xE2\x96\x81";
            escape_spaces(escaped, run);
            spm_encode(v, escaped, out);
            prev_special = false;
        });
    }
}

}  // namespace

std::vector<token_id> vocab::tokenize(std::string_view text, bool add_special, bool parse_special) const {
    const impl & v = *impl_;
    std::vector<token_id> out;
    out.reserve(text.size() / 3 + 2);
    if (add_special && v.add_bos) out.push_back(v.bos);

    if (!text.empty()) {
        std::vector<fragment> frags{{k_no_token, 0, text.size()}};
        std::vector<fragment> scratch;
        // A cheap first pass: most texts hold none of the special tokens.
        const auto & specials = parse_special ? v.special_parsed : v.special_always;
        for (const token_id id : specials) {
            if (text.find(v.tokens[id].text) == std::string_view::npos) continue;
            split_on(v, id, text, frags, scratch);
        }
        encode(v, text, frags, out);
    }

    if (add_special && v.add_eos) out.push_back(v.eos);
    return out;
}

}  // namespace hearth::inference::tokenizer
