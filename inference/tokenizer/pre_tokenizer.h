// pre_tokenizer: splits text into the words that byte-level BPE merges inside, with the
// regular expressions llama.cpp picks by `tokenizer.ggml.pre`. Several expressions apply in
// sequence: each one splits every piece left by the previous ones, and both its matches and
// the text between them become pieces (Hugging Face's "Isolated" split behaviour).
// Matching is PCRE2 (UTF + Unicode properties, JIT). Invalid UTF-8 never matches anything,
// so its bytes end up in the gaps and still reach BPE unchanged.
// Thread-safety: immutable after create(); split() may run on any number of threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace hearth::inference::tokenizer {

struct byte_span {
    uint32_t offset;
    uint32_t length;
};

class pre_tokenizer {
public:
    // `pre` is the value of tokenizer.ggml.pre ("" = llama.cpp's default expressions).
    static result<pre_tokenizer> create(std::string_view pre);
    // Compiles the given expressions (tests, and vocabularies with their own).
    static result<pre_tokenizer> from_expressions(std::vector<std::string> expressions);

    pre_tokenizer(pre_tokenizer &&) noexcept;
    pre_tokenizer & operator=(pre_tokenizer &&) noexcept;
    ~pre_tokenizer();

    // Splits `text` (at most 4 GiB) into consecutive non-empty spans that cover it exactly.
    std::vector<byte_span> split(std::string_view text) const;

    const std::vector<std::string> & expressions() const;

private:
    struct impl;
    explicit pre_tokenizer(std::unique_ptr<impl> p);
    std::unique_ptr<impl> impl_;
};

// The expressions llama.cpp uses for `pre`; an error for a name it does not know.
result<std::vector<std::string>> pre_tokenizer_expressions(std::string_view pre);

}  // namespace hearth::inference::tokenizer
