#include "inference/fim.h"

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
    std::vector<token_id> out;
    auto append_text = [&](const std::string & text) { append_document_text(v, text, out); };
    if (v.add_bos() && v.bos() != k_no_token) out.push_back(v.bos());

    const bool repo_level = !in.extra.empty() && v.fim_sep() != k_no_token;
    if (repo_level) {
        if (v.fim_rep() != k_no_token) {
            out.push_back(v.fim_rep());
            append_text((in.repo_name.empty() ? std::string("workspace") : in.repo_name) + "\n");
        }
        for (const auto & f : in.extra) {
            out.push_back(v.fim_sep());
            append_text(f.path + "\n" + f.text);
        }
        out.push_back(v.fim_sep());
        append_text(in.path + "\n");
    }
    out.push_back(v.fim_pre());
    append_text(in.prefix);
    out.push_back(v.fim_suf());
    append_text(in.suffix);
    out.push_back(v.fim_mid());
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

}  // namespace hearth::inference
