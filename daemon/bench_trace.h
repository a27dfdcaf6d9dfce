// bench_trace: replays an editing trace against the engine the way an editor drives the
// daemon, once with the per-file KV cache reused and once cold, and reports for every
// completion the tokens reused and evaluated, the time to first token and the total time.
// Trace format (JSON lines, one event per line; lines and columns 0-based, columns in bytes):
//   {"op":"open","uri":U,"text":T}
//   {"op":"edit","uri":U,"start":[L,C],"end":[L,C],"text":T}     replace the range with T
//   {"op":"complete","uri":U,"line":L,"col":C}
// Thread-safety: a command-line tool; single-threaded apart from the kernels' pool.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "base/result.h"
#include "daemon/cli_commands.h"

namespace hearth::daemon {

struct trace_event {
    enum class kind { open, edit, complete } op = kind::open;
    std::string uri;
    std::string text;
    int64_t start_line = 0, start_col = 0, end_line = 0, end_col = 0;   // edit
    int64_t line = 0, col = 0;                                           // complete
};

// Parses a trace; the error names the line number and what is wrong.
result<std::vector<trace_event>> parse_trace(const std::string & jsonl);

// Applies an edit to a document's text; the error says which position is outside it.
status apply_trace_edit(std::string & text, const trace_event & e);
result<size_t> trace_offset(const std::string & text, int64_t line, int64_t col);

void add_bench_trace_command(CLI::App & bench, cli_state & state);

}  // namespace hearth::daemon
