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

void encode(const vocab::impl & v, std::string_view text, const std::vector<fragment> & frags,
            std::vector<token_id> & out) {
    if (v.kind == vocab_kind::bpe) {
        for (const fragment & f : frags) {
            if (f.token != k_no_token) out.push_back(f.token);
            else bpe_encode(v, text.substr(f.offset, f.length), out);
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
        escaped.clear();
        if (v.add_space_prefix && prev_special) escaped += "\xE2\x96\x81";
        escape_spaces(escaped, text.substr(f.offset, f.length));
        spm_encode(v, escaped, out);
        prev_special = false;
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
