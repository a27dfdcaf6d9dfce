#include "inference/prompt/reasoning_filter.h"

#include <algorithm>

namespace hearth::inference {
namespace {

constexpr std::string_view k_open = "<think>";
constexpr std::string_view k_close = "</think>";
// Folded: a collapsed block in the markdown the editors render; blank lines around the
// reasoning keep its own markdown (lists, code) intact inside it.
constexpr std::string_view k_fold_open = "<details><summary>Reasoning</summary>\n\n";
constexpr std::string_view k_fold_close = "\n\n</details>\n\n";

size_t first_non_blank(std::string_view s) { return s.find_first_not_of(" \t\r\n"); }

// The longest end of `text` that is the start of `tag` (but not all of it): it may be completed
// by the next piece, so it is held back.
size_t partial_tag_at_end(std::string_view text, std::string_view tag) {
    for (size_t k = std::min(text.size(), tag.size() - 1); k > 0; --k)
        if (text.substr(text.size() - k) == tag.substr(0, k)) return k;
    return 0;
}

}  // namespace

reasoning_filter::reasoning_filter(reasoning_display display, bool opened_by_prompt)
    : display_(display), state_(opened_by_prompt ? state::reasoning : state::before) {
    if (opened_by_prompt && display_ == reasoning_display::folded) show(k_fold_open);
}

reasoning_filter::reasoning_filter(reasoning_display display, chat_format f)
    : reasoning_filter(display, f == chat_format::deepseek_r1) {}

void reasoning_filter::show(std::string_view text) { shown_ += text; }

std::string_view reasoning_filter::push(std::string_view piece) {
    held_ += piece;
    const bool folded = display_ == reasoning_display::folded;
    for (bool more = true; more;) {
        more = false;
        switch (state_) {
            case state::before: {
                const size_t i = first_non_blank(held_);
                if (i == std::string::npos) break;   // only blank space so far: undecided
                const std::string_view rest = std::string_view(held_).substr(i);
                if (rest.substr(0, k_open.size()) == k_open) {
                    held_.erase(0, i + k_open.size());
                    if (folded) show(k_fold_open);
                    state_ = state::reasoning;
                } else if (k_open.substr(0, rest.size()) == rest) {
                    break;   // "<thi": the next piece tells
                } else {
                    state_ = state::answer;
                }
                more = true;
                break;
            }
            case state::reasoning: {
                const size_t at = held_.find(k_close);
                const size_t text_end = at != std::string::npos ? at : held_.size() - partial_tag_at_end(held_, k_close);
                if (folded) show(std::string_view(held_).substr(0, text_end));
                if (at == std::string::npos) {
                    held_.erase(0, text_end);
                    break;
                }
                held_.erase(0, at + k_close.size());
                if (folded) show(k_fold_close);
                state_ = state::after_reasoning;
                more = true;
                break;
            }
            case state::after_reasoning: {
                const size_t i = first_non_blank(held_);
                held_.erase(0, i == std::string::npos ? held_.size() : i);
                if (i != std::string::npos) {
                    state_ = state::answer;
                    more = true;
                }
                break;
            }
            case state::answer:
                show(held_);
                held_.clear();
                break;
        }
    }
    const size_t from = shown_from_;
    shown_from_ = shown_.size();
    return std::string_view(shown_).substr(from);
}

std::string_view reasoning_filter::finish() {
    switch (state_) {
        case state::before:
        case state::answer: show(held_); break;   // blank space or a tag's start that never finished: text
        case state::reasoning:
            if (display_ == reasoning_display::folded) {
                show(held_);
                show(k_fold_close);
            }
            break;
        case state::after_reasoning: break;
    }
    held_.clear();
    state_ = state::answer;
    const size_t from = shown_from_;
    shown_from_ = shown_.size();
    return std::string_view(shown_).substr(from);
}

std::string filter_reasoning(std::string_view answer, reasoning_display display, bool opened_by_prompt) {
    reasoning_filter f(display, opened_by_prompt);
    f.push(answer);
    f.finish();
    return f.shown();
}

std::vector<token_id> reasoning_tokens(const tokenizer::vocab & v) {
    std::vector<token_id> out;
    for (const auto tag : {k_open, k_close})
        if (const token_id id = v.find_token(tag); id != k_no_token) out.push_back(id);
    return out;
}

}  // namespace hearth::inference
