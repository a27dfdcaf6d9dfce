// fim: fill-in-the-middle prompts built from the model's own FIM tokens (GGUF metadata,
// never hard-coded ids), in the layout of its family (fim_format.h). Prefix-suffix-middle:
//   Qwen:       [<repo>name\n] [<file_sep>path\ncontext ...] [<file_sep>path\n] <pre>prefix<suf>suffix<mid>
//   StarCoder2: [<repo>name] [<file_sep>path\ncontext ...] [<file_sep>] <pre>[path\n]prefix<suf>suffix<mid>
//   CodeLlama, DeepSeek-Coder, CodeGemma: [BOS] <pre>prefix<suf>suffix<mid>
// BOS comes first where the model adds one. The repo-level part appears only where the
// model has file-separator tokens and there is extra context (else the context is dropped). Extra context goes first so it stays in the cached part of the prompt
// while the cursor moves. Each part is tokenized on its own, so an edit in one part leaves
// the tokens of the parts before it unchanged (what the KV cache reuse relies on).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "inference/tokenizer/vocab.h"

namespace hearth::inference {

struct fim_context_file {
    std::string path;      // shown to the model after the file separator
    std::string text;
};

struct fim_input {
    std::string prefix;                         // text before the cursor
    std::string suffix;                         // text after the cursor
    std::string path;                           // the current file's path (repo-level form only)
    std::string repo_name;                      // repo-level form only
    std::vector<fim_context_file> extra;        // other files, oldest first
};

// Whether the model can do FIM at all (has prefix, suffix and middle tokens).
bool has_fim(const tokenizer::vocab & v);

// Token ids of the prompt; the error says which FIM token the model lacks.
result<std::vector<token_id>> build_fim_prompt(const tokenizer::vocab & v, const fim_input & in);

// The prompt for a completion at the cursor: the FIM prompt where the model has FIM tokens,
// else a plain continuation of the prefix ([BOS] prefix; the suffix and extra context are
// dropped), so a base model without FIM training still completes what comes next.
result<std::vector<token_id>> build_completion_prompt(const tokenizer::vocab & v, const fim_input & in);

// The tokens that end a fill besides the vocabulary's end-of-generation set (fim_format.h),
// for generation_params::end_tokens; empty for a model without FIM.
std::vector<token_id> fim_end_tokens(const tokenizer::vocab & v);

}  // namespace hearth::inference
