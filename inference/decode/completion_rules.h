// completion_rules: where an inline completion should end, decided from the text around
// the cursor. single_line stops at the end of the line. multi_line continues across lines
// while they stay inside the block the cursor is in (indented at least as deep as the
// cursor's line; from a blank line, as deep as the completion's first line with text), and
// stops before a line that only repeats what the suffix already says.
// A completion the rule ends keeps the newline after its last line: it tells the cleanup
// (daemon/pipeline/fim_window.h) that the line is finished, which matters before text on the line.
// Thread-safety: pure functions; the rule returned owns copies of what it needs.
#pragma once

#include <string>
#include <string_view>

#include "inference/decode/generate.h"

namespace hearth::inference {

enum class line_mode { single_line, multi_line };

// Guesses the mode from the cursor's surroundings: at the end of a line that opens a block
// (ends with '{', '(', '[', ':') or on an empty line -> multi_line; otherwise single_line.
line_mode guess_line_mode(std::string_view prefix, std::string_view suffix);

// The stop rule for generate(). prefix/suffix are the document text around the cursor.
stop_rule make_completion_rule(line_mode mode, std::string_view prefix, std::string_view suffix);

// With the cursor at the start of a line that has text: whether the completion's first line
// with text is that line again. Such an answer adds nothing (the cleanup drops it): the model
// wrote the line it expects after the hole, not the hole's own line.
bool repeats_cursor_line(std::string_view prefix, std::string_view suffix, std::string_view completion);

}  // namespace hearth::inference
