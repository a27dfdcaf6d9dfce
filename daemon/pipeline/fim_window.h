// fim_window: the text-only decisions of an inline completion, kept free of the protocol
// and the model so they can be tested alone:
//  - which part of the document goes into the fill-in-the-middle prompt: whole lines
//    before the cursor line (prefix) and fewer whole lines after it (suffix), so the prompt
//    moves by whole lines and the KV cache (exact prefix and moved chunks) serves it again;
//  - whether the completion may span lines (multi_line) or ends at the line's end;
//  - trimming a completion that only repeats what already follows the cursor.
// Offsets are byte offsets into UTF-8 text. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/engine/model_service.h"

namespace hearth::daemon {

struct fim_window {
    std::string prefix;   // from the start of line (cursor line - prefix_lines) to the cursor
    std::string suffix;   // from the cursor to the end of line (cursor line + suffix_lines), EOL included
};

// How the window's edges are placed around the cursor line.
enum class window_edges {
    exact,  // exactly prefix_lines before and suffix_lines after (fewer at the document's ends)
    grid,   // at least that many, the edges on a grid of half those counts (see the .cpp), so
            // consecutive keystrokes share the prompt's head byte for byte
};

// The edges are the caller's choice (completion.window-grid), so its default lives in one place.
fim_window cut_fim_window(std::string_view text, size_t cursor, int prefix_lines, int suffix_lines, window_edges edges);

// multi_line when the cursor ends its line's content (only closing brackets or spaces after
// it) right after an opening bracket or a colon, or sits on a blank line inside a block
// (indented, or right after a line that opens one); single_line otherwise, e.g. mid-line.
completion_mode detect_mode(std::string_view text, size_t cursor);

// Cuts a completion down to what is new: in single_line mode it ends at its first line with
// text (an answer that starts on the next line keeps the newlines before it, unless the
// cursor is mid-line); a tail that really repeats the start of the rest of the cursor line is
// dropped (the model often closes a bracket the editor already closed; never a cut inside an
// identifier, nor a bracket the completion opened itself); in multi_line mode the completion ends
// before the first of its lines that equals the next non-blank line after the cursor.
// Trailing whitespace is removed, except that a whole line completed before text on the
// cursor line keeps its newline (and the cursor line's indentation after it), so accepting it
// leaves two lines, not one glued. prefix/suffix: the FIM window around the cursor.
// An empty result means "nothing worth showing".
std::string trim_completion(std::string_view completion, std::string_view prefix, std::string_view suffix,
                            completion_mode mode);

// Which cleanup filter removed text that was not blank (for the log and hearth/status):
// after_line: single_line, what followed the first line; mid_line_newline: the answer
// started on the next line with the cursor mid-line; suffix_line: multi_line, from the line
// that repeats the suffix's next line; overlap: the repeat of the cursor line's rest;
// blank: the model wrote only whitespace; fence: from a Markdown fence line on, in a window
// that has none (an instruct model closing a chat's code block); new_line_after_word:
// single_line at the end of a line that holds one word so far, an answer that only starts a
// new line (after a half-typed identifier it would read glued to it).
enum class cleanup_filter : uint8_t { none, after_line, mid_line_newline, suffix_line, overlap, blank, fence, new_line_after_word };
inline constexpr size_t k_n_cleanup_filters = 8;
std::string_view cleanup_filter_name(cleanup_filter f);

struct cleaned_completion {
    std::string text;                            // what trim_completion returns
    cleanup_filter cut = cleanup_filter::none;   // the last filter that removed non-blank text
};
cleaned_completion clean_completion(std::string_view completion, std::string_view prefix, std::string_view suffix,
                                    completion_mode mode);

}  // namespace hearth::daemon
