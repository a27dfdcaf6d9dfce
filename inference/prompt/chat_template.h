// chat_template: turns a conversation into the prompt text an instruct model expects.
// The Jinja template text inside a GGUF file is untrusted and never executed: we recognise
// which well-known format it is (by its markers) and render that format with our own code.
// A format is only ever used with a vocabulary that has its special tokens as tokens: a
// template we do not recognise (or none) falls back to the turn tokens the vocabulary has,
// and `--chat-template NAME` is refused when the vocabulary lacks that format's tokens.
// Families: chatml (Qwen, ...), gemma, llama3, llama2 (also CodeLlama-Instruct: [INST] with
// <<SYS>>), mistral ([INST] without <<SYS>>), phi3, deepseek (<｜User｜>/<｜Assistant｜>),
// deepseek-r1 (the same, opening the answer with <think> as the R1 distills' template does,
// and dropping the reasoning of earlier answers), granite.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "inference/tokenizer/vocab.h"

namespace hearth::inference {

enum class chat_format { chatml, gemma, llama3, llama2, mistral, phi3, deepseek, deepseek_r1, granite };

struct chat_turn {
    std::string role;      // "system", "user" or "assistant"
    std::string content;
};

// The names: "chatml", "gemma", "llama3", "llama2", "mistral", "phi3", "deepseek",
// "deepseek-r1", "granite"; the error lists them.
result<chat_format> parse_chat_format(std::string_view name);
std::string_view chat_format_name(chat_format f);

// Recognises the format of a GGUF `tokenizer.chat_template` by its markers alone. An empty
// template (the key is absent) is an error too.
result<chat_format> detect_chat_format(std::string_view template_text);

// The special tokens a format writes (each must be one token of the vocabulary).
std::vector<std::string_view> chat_format_tokens(chat_format f);

// Ok when the vocabulary has every special token of the format; else the error names those missing.
status check_chat_format(chat_format f, const tokenizer::vocab & v);

struct chat_choice {
    chat_format format;
    std::string reason;    // why: the option, the template's markers or the vocabulary's tokens
};

// The format for a model: `requested` (a name, from --chat-template) when given and its tokens
// exist; else the template's when recognised and its tokens exist; else the first family whose
// turn tokens the vocabulary has (the [INST] families are never guessed: their markers are
// plain text, so a vocabulary cannot show them). The error says what was tried.
result<chat_choice> choose_chat_format(std::string_view requested, std::string_view template_text,
                                       const tokenizer::vocab & v);

// The prompt text, ending where the assistant's answer starts. Special markers appear as
// their token texts (e.g. "<|im_start|>") and must be tokenized with special parsing on.
// A role other than system/user/assistant is an error naming it.
result<std::string> render_chat(chat_format f, const std::vector<chat_turn> & turns);

// The marker that ends an assistant turn (also an end-of-generation token in these formats).
std::string_view chat_end_of_turn(chat_format f);

}  // namespace hearth::inference
