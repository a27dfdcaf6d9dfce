#include "inference/prompt/fim.h"

#include "inference/prompt/fim_format.h"

namespace hearth::inference {
namespace {

// The document is user text: control-token strings inside it stay plain text.
void append_document_text(const tokenizer::vocab & v, const std::string & text, std::vector<token_id> & out) {
    const auto ids = v.tokenize(text, /*add_special=*/false, /*parse_special=*/false);
    out.insert(out.end(), ids.begin(), ids.end());
}

}  // namespace

bool has_fim(const tokenizer::vocab & v) {
    return v.fim_pre() != k_no_token && v.fim_suf() != k_no_token && v.fim_mid() != k_no_token;
}

result<std::vector<token_id>> build_fim_prompt(const tokenizer::vocab & v, const fim_input & in) {
    if (!has_fim(v))
        return fail("the model has no fill-in-the-middle tokens (prefix ", v.fim_pre(), ", suffix ", v.fim_suf(),
                    ", middle ", v.fim_mid(), "): it cannot complete code at a cursor");
    const fim_format f = detect_fim_format(v);
    std::vector<token_id> out;
    auto append_text = [&](const std::string & text) { append_document_text(v, text, out); };
    if (v.add_bos() && v.bos() != k_no_token) out.push_back(v.bos());

    const bool repo_level = !in.extra.empty() && f.file_sep != k_no_token;
    if (repo_level) {
        if (f.repo_name != k_no_token) {
            out.push_back(f.repo_name);
            append_text((in.repo_name.empty() ? std::string("workspace") : in.repo_name) +
                        (f.newline_after_repo_name ? "\n" : ""));
        }
        for (const auto & file : in.extra) {
            out.push_back(f.file_sep);
            append_text(file.path + "\n" + file.text);
        }
        out.push_back(f.file_sep);
        if (!f.path_inside_prefix) append_text(in.path + "\n");
    }
    out.push_back(f.prefix);
    if (repo_level && f.path_inside_prefix) append_text(in.path + "\n");
    append_text(in.prefix);
    out.push_back(f.suffix);
    append_text(in.suffix);
    out.push_back(f.middle);
    return out;
}

result<std::vector<token_id>> build_completion_prompt(const tokenizer::vocab & v, const fim_input & in) {
    if (has_fim(v)) return build_fim_prompt(v, in);
    std::vector<token_id> out;
    if (v.add_bos() && v.bos() != k_no_token) out.push_back(v.bos());
    append_document_text(v, in.prefix, out);
    if (out.empty()) return fail("nothing to complete: the model has no fill-in-the-middle tokens and the text before the cursor is empty");
    return out;
}

std::vector<token_id> fim_end_tokens(const tokenizer::vocab & v) { return detect_fim_format(v).end_tokens; }

}  // namespace hearth::inference
