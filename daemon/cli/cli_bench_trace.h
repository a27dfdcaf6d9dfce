// bench_trace: `hearth bench trace FILE...` replays editing traces (daemon/bench/edit_trace.h)
// three times each: as the daemon serves them (chunk reuse, typed ahead, prefetch, each a
// switch), with exact prefix reuse only, and cold; and prints the time to first token of each
// (median, p90), the ratio cold / reuse, how many answers came from the suggestion memory,
// the median prefetch time, and how many texts equal the cold ones.
// Thread-safety: a command-line tool.
#pragma once

#include <CLI/CLI.hpp>

#include "daemon/cli/cli_commands.h"

namespace hearth::daemon {

void add_bench_trace_command(CLI::App & bench, cli_state & state);

}  // namespace hearth::daemon
