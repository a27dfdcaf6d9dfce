#include "inference/prompt/fim_format.h"

#include <algorithm>
#include <initializer_list>

namespace hearth::inference {
namespace {

struct family_info {
    fim_family family;
    std::string_view name;
    std::string_view who;                        // for the reason: whose tokens these are, and why
    std::vector<std::string_view> prefix_texts;  // the prefix token's text tells the family
    std::string_view repo_text, sep_text;        // repository-level tokens when the vocabulary names none
    bool newline_after_repo_name;
    bool path_inside_prefix;
    std::vector<std::string_view> end_texts;
};

// CodeGemma shares Qwen's prefix text; its <|file_separator|> tells them apart (checked first).
// U+2581 (the SentencePiece space) and U+FF5C (DeepSeek's fullwidth bar) are written as their
// bytes: test_tokenizer_roundtrip tokenizes this file, and an SPM vocabulary reads U+2581 as
// a space.
const std::vector<family_info> & families() {
    static const std::vector<family_info> all{
        {fim_family::codegemma, "codegemma", "CodeGemma's tokens (with <|file_separator|> in the vocabulary)", {"<|fim_prefix|>"}, "", "", true, false,
         {"<|file_separator|>", "<eos>"}},
        {fim_family::qwen, "qwen", "Qwen's tokens", {"<|fim_prefix|>"}, "", "", true, false,
         {"<|endoftext|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"}},
        {fim_family::starcoder, "starcoder", "StarCoder's tokens", {"<fim_prefix>", "<fim-prefix>"}, "<repo_name>", "<file_sep>", false,
         true, {"<|endoftext|>", "<fim_pad>", "<file_sep>"}},
        {fim_family::codellama, "codellama", "CodeLlama's tokens", {"\xe2\x96\x81" "<PRE>", "<PRE>"}, "", "", true, false,
         {"\xe2\x96\x81" "<EOT>", "<EOT>", "</s>"}},
        {fim_family::deepseek, "deepseek", "DeepSeek-Coder's tokens", {"<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>"}, "", "",
         true, false, {"<\xef\xbd\x9c" "end\xe2\x96\x81" "of\xe2\x96\x81" "sentence\xef\xbd\x9c>", "<|EOT|>"}},
    };
    return all;
}

const family_info * family_of(const tokenizer::vocab & v) {
    const std::string_view prefix = v.token_text(v.fim_pre());
    for (const auto & f : families()) {
        if (std::find(f.prefix_texts.begin(), f.prefix_texts.end(), prefix) == f.prefix_texts.end()) continue;
        if (f.family == fim_family::codegemma && v.find_token("<|file_separator|>") == k_no_token) continue;
        return &f;
    }
    return nullptr;
}

std::string token_list(const tokenizer::vocab & v, std::initializer_list<token_id> ids) {
    std::string out;
    for (const token_id id : ids)
        if (id != k_no_token) out += (out.empty() ? "" : ", ") + std::string(v.token_text(id));
    return out;
}

}  // namespace

std::string_view fim_family_name(fim_family f) {
    if (f == fim_family::none) return "none";
    if (f == fim_family::generic) return "generic";
    for (const auto & i : families())
        if (i.family == f) return i.name;
    return "none";
}

fim_format detect_fim_format(const tokenizer::vocab & v) {
    fim_format out;
    if (v.fim_pre() == k_no_token || v.fim_suf() == k_no_token || v.fim_mid() == k_no_token) {
        out.reason = "no prefix, suffix and middle tokens (neither tokenizer.ggml.fim_*_token_id keys nor their usual texts)";
        return out;
    }
    out.prefix = v.fim_pre();
    out.suffix = v.fim_suf();
    out.middle = v.fim_mid();
    const family_info * f = family_of(v);
    out.family = f ? f->family : fim_family::generic;
    auto pick = [&](token_id from_vocab, std::string_view text) {
        return from_vocab != k_no_token || text.empty() ? from_vocab : v.find_token(text);
    };
    out.repo_name = pick(v.fim_rep(), f ? f->repo_text : "");
    out.file_sep = pick(v.fim_sep(), f ? f->sep_text : "");
    if (f) {
        out.newline_after_repo_name = f->newline_after_repo_name;
        out.path_inside_prefix = f->path_inside_prefix;
        for (const auto text : f->end_texts)
            if (const token_id id = v.find_token(text); id != k_no_token) out.end_tokens.push_back(id);
        std::sort(out.end_tokens.begin(), out.end_tokens.end());
        out.end_tokens.erase(std::unique(out.end_tokens.begin(), out.end_tokens.end()), out.end_tokens.end());
    }
    out.reason = std::string(v.fim_from_keys() ? "tokenizer.ggml.fim_pre/suf/mid_token_id name " : "token texts ") +
                 token_list(v, {out.prefix, out.suffix, out.middle}) + ": " +
                 (f ? std::string(f->who) : std::string("no family we know, laid out as Qwen's"));
    if (out.file_sep != k_no_token)
        out.reason += "; repository-level context with " + token_list(v, {out.repo_name, out.file_sep});
    if (!out.end_tokens.empty()) {
        out.reason += "; a fill ends at ";
        for (size_t i = 0; i < out.end_tokens.size(); ++i)
            out.reason += (i ? ", " : "") + std::string(v.token_text(out.end_tokens[i]));
    }
    return out;
}

}  // namespace hearth::inference
