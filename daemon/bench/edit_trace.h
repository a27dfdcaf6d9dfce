// edit_trace: the format of editing traces that `hearth bench trace` replays, as an editor
// would drive the daemon (JSON lines, one event per line; lines and columns 0-based,
// columns in bytes):
//   {"op":"open","uri":U,"text":T}
//   {"op":"edit","uri":U,"start":[L,C],"end":[L,C],"text":T}   replace the range with T
//   {"op":"complete","uri":U,"line":L,"col":C}                  ask for a completion there
//   {"op":"complete","uri":U}                                   ... at the document's cursor
//   {"op":"type","uri":U,"text":T}               type T at the cursor
//   {"op":"type_suggestion","uri":U,"chars":N}   type the first N bytes of the suggestion shown
//   {"op":"accept","uri":U}                      accept the suggestion shown (Tab)
// (with no suggestion shown, the last two do nothing)
// The cursor is where the last edit, typed text or accepted suggestion ended, or where the
// last completion was asked for.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace hearth::daemon {

struct trace_event {
    enum class kind { open, edit, complete, type, type_suggestion, accept } op = kind::open;
    std::string uri;
    std::string text;
    int64_t start_line = 0, start_col = 0, end_line = 0, end_col = 0;   // edit
    int64_t line = -1, col = -1;                                         // complete; -1: at the cursor
    int64_t chars = 0;                                                   // type_suggestion
};

// Parses a trace; the error names the line number and what is wrong.
result<std::vector<trace_event>> parse_trace(const std::string & jsonl);

// Byte offset of line:col in text; the error says which part is outside it.
result<size_t> trace_offset(const std::string & text, int64_t line, int64_t col);

// Applies an edit to a document's text; returns the offset just after the inserted text.
result<size_t> apply_trace_edit(std::string & text, const trace_event & e);

}  // namespace hearth::daemon
