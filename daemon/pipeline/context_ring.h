// context_ring: pieces of other files the user worked in lately, sent before the FIM window
// as extra context (with their paths, in the repo-level form where the model has file
// separator tokens). A piece is `chunk_lines` whole lines around a line of interest: the top
// of a file when it is opened, the place of the last completion when the user moves to
// another file. A new piece replaces the ones it mostly repeats (at least 90% of their
// lines, compared as sets of lines), and the oldest are dropped beyond `max_chunks`. Pieces
// change only on those events, not per keystroke, so the head of the prompt (and its cached
// KV) stays put while the user types.
// Thread-safety: none; the completion service locks around it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/engine/model_service.h"

namespace hearth::daemon {

class context_ring {
public:
    context_ring(size_t max_chunks, int32_t chunk_lines) : max_chunks_(max_chunks), chunk_lines_(chunk_lines) {}

    // Takes the lines of `text` around 0-based `line` (centred, clipped to the file).
    void add(const std::string & uri, std::string_view text, int64_t line);

    // The pieces from files other than `uri`, oldest first (what goes first in the prompt).
    std::vector<context_chunk> chunks_except(std::string_view uri) const;

    size_t size() const { return chunks_.size(); }

    // The fraction of a's lines (ignoring blank ones) that b has too.
    static double similarity(std::string_view a, std::string_view b);

private:
    size_t max_chunks_;
    int32_t chunk_lines_;
    std::deque<context_chunk> chunks_;   // oldest first
};

}  // namespace hearth::daemon
