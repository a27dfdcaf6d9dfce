// bench_next_edit: `hearth bench next-edit` measures hearth/nextEdit on real edit histories
// (the diff between two consecutive releases of popular Python packages) through the daemon's
// LSP path, beside a baseline that never predicts. The work is in
// bench/next_edit/run_next_edit.py (it starts `hearth daemon`, replays each task's first edits
// as didChange, asks for the next edit and scores it); this command resolves the model and runs
// that script with this executable. Thread-safety: a command-line tool.
#pragma once

#include <CLI/CLI.hpp>

#include "daemon/cli/cli_commands.h"

namespace hearth::daemon {

void add_bench_next_edit_command(CLI::App & bench, cli_state & state);

}  // namespace hearth::daemon
