// reasoning_filter: the reasoning block of a chat answer (<think> ... </think>, as the
// DeepSeek-R1 distills write it) hidden from what the user sees, or folded into a collapsed
// markdown <details> block. It works on streamed pieces: a tag may arrive split across pieces
// (or inside one with text around it), so text that could still be the start of a tag is
// held back until the next piece tells. Only a block at the very start of the answer is
// reasoning (after blank space); a "<think>" later on is the answer's own text. Where the
// prompt already opened the block (deepseek-r1's ends with "<think>\n"), the answer starts
// inside it. The blank lines between "</think>" and the answer are dropped.
// An answer cut off while still reasoning shows nothing when hidden; folded, the block is closed.
// Thread-safety: one owner (the generation that streams into it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "inference/prompt/chat_template.h"

namespace hearth::inference {

enum class reasoning_display { hidden, folded };

class reasoning_filter {
public:
    reasoning_filter(reasoning_display display, bool opened_by_prompt);
    // For an answer in chat format `f` (opened by the prompt for deepseek-r1).
    reasoning_filter(reasoning_display display, chat_format f);

    // The text to show now for the next streamed piece (may be empty); valid until the next call.
    std::string_view push(std::string_view piece);
    // At the end of the answer: what was held back, and the folded block's end if it is open.
    std::string_view finish();
    // Everything shown so far.
    const std::string & shown() const { return shown_; }

private:
    enum class state { before, reasoning, after_reasoning, answer };
    void show(std::string_view text);

    reasoning_display display_;
    state state_;
    std::string held_;    // text not decided yet: a possible tag's start, or blank space
    std::string shown_;
    size_t shown_from_ = 0;   // shown_ up to here was returned by an earlier call
};

// The whole answer at once through a fresh filter (what shown() is after streaming it).
std::string filter_reasoning(std::string_view answer, reasoning_display display, bool opened_by_prompt);

// The vocabulary's <think> and </think> tokens (those it has), for generation_params::
// rendered_tokens: a vocabulary that marks them control would otherwise stream them as nothing.
std::vector<token_id> reasoning_tokens(const tokenizer::vocab & v);

}  // namespace hearth::inference
