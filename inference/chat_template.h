// chat_template: turns a conversation into the prompt text an instruct model expects.
// The Jinja template text inside a GGUF file is untrusted and never executed: we recognise
// which well-known format it is (by its markers) and render that format with our own code.
// Unknown templates are refused with a clear error; `--chat-template NAME` chooses one.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace hearth::inference {

enum class chat_format { chatml, gemma, llama3, llama2 };

struct chat_turn {
    std::string role;      // "system", "user" or "assistant"
    std::string content;
};

// "chatml", "gemma", "llama3", "llama2"; the error lists the names.
result<chat_format> parse_chat_format(std::string_view name);
std::string_view chat_format_name(chat_format f);

// Recognises the format of a GGUF `tokenizer.chat_template`. An empty template (the key is
// absent) is an error too: the caller decides whether to fall back to a named format.
result<chat_format> detect_chat_format(std::string_view template_text);

// The prompt text, ending where the assistant's answer starts. Special markers appear as
// their token texts (e.g. "<|im_start|>") and must be tokenized with special parsing on.
// A role other than system/user/assistant is an error naming it.
result<std::string> render_chat(chat_format f, const std::vector<chat_turn> & turns);

// The marker that ends an assistant turn (also an end-of-generation token in these formats).
std::string_view chat_end_of_turn(chat_format f);

}  // namespace hearth::inference
