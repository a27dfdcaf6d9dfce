#include "inference/tokenizer/detokenizer.h"

#include "inference/tokenizer/unicode.h"

namespace hearth::inference::tokenizer {

std::string stream_detokenizer::push(token_id id) {
    held_ += vocab_->piece(id, render_special_);
    const size_t keep = utf8_incomplete_tail(held_);
    std::string out = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out;
}

std::string stream_detokenizer::flush() {
    std::string out;
    out.swap(held_);
    return out;
}

}  // namespace hearth::inference::tokenizer
