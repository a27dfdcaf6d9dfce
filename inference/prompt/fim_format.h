// fim_format: which fill-in-the-middle prompt a model was trained on, told by its FIM
// tokens (as the vocabulary found them: tokenizer.ggml.fim_*_token_id keys, else their
// texts, the way llama.cpp finds them), with the layout details of that family and the
// tokens that end a fill. Every family writes prefix-suffix-middle:
//   [BOS] <pre> prefix <suf> suffix <mid>
// and differs in its tokens, its repository-level form (extra files before the prompt) and
// where a fill ends. A family without file-separator tokens has no repository-level form.
// Thread-safety: pure functions over an immutable vocabulary.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "inference/tokenizer/vocab.h"

namespace hearth::inference {

// generic: FIM tokens of no family below (llama.cpp's other spellings); laid out as Qwen's.
enum class fim_family { none, qwen, starcoder, codellama, deepseek, codegemma, generic };

struct fim_format {
    fim_family family = fim_family::none;
    token_id prefix = k_no_token, suffix = k_no_token, middle = k_no_token;
    // Repository-level form: repo_name before the repository's name, file_sep before each
    // file's path. k_no_token where the family has none.
    token_id repo_name = k_no_token;
    token_id file_sep = k_no_token;
    bool newline_after_repo_name = true;   // Qwen: "<|repo_name|>name\n"; StarCoder2: "<repo_name>name"
    // StarCoder2 names the current file inside the prefix ("<file_sep><fim_prefix>path\n...");
    // Qwen gives it its own separator before it ("<|file_sep|>path\n<|fim_prefix|>...").
    bool path_inside_prefix = false;
    // The family's tokens that end a fill, those the vocabulary has (ascending). Generation
    // also stops on the vocabulary's own end-of-generation set; these add the ones llama.cpp
    // does not count there (StarCoder2's <file_sep>, CodeGemma's <|file_separator|>).
    std::vector<token_id> end_tokens;
    std::string reason;   // how it was told: where the tokens came from and which texts they are
};

// The model's FIM format; family none (with the reason) when it has no prefix/suffix/middle tokens.
fim_format detect_fim_format(const tokenizer::vocab & v);

// "qwen", "starcoder", "codellama", "deepseek", "codegemma", "generic", "none".
std::string_view fim_family_name(fim_family f);

}  // namespace hearth::inference
