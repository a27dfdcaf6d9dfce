// stream_detokenizer: turns generated token ids into text as they arrive, holding back the
// bytes of a UTF-8 sequence that the next token may complete (byte-fallback and byte-level
// tokens split characters), so every chunk handed on is whole characters. Bytes that can
// never form a character are passed through as they are.
// Thread-safety: one owner (the generation loop); the vocab must outlive it.
#pragma once

#include <string>

#include "inference/tokenizer/vocab.h"

namespace hearth::inference::tokenizer {

class stream_detokenizer {
public:
    explicit stream_detokenizer(const vocab & v, bool render_special = false)
        : vocab_(&v), render_special_(render_special) {}

    // The text completed by this token (possibly empty).
    std::string push(token_id id);
    // Everything still held (an unfinished sequence at the end of generation).
    std::string flush();
    void reset() { held_.clear(); }
    size_t held_bytes() const { return held_.size(); }

private:
    const vocab * vocab_;
    bool render_special_;
    std::string held_;
};

}  // namespace hearth::inference::tokenizer
