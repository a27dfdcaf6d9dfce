// bench_editor: `hearth bench editor` measures what a user meets on opening a file and starting
// to type: the first suggestion after the file is opened and read for a second, and the
// suggestions while typing on, through the daemon's real LSP path, beside llama.cpp driven as
// llama.vim drives llama-server. The work is in bench/editor/run_editor.py; this command
// resolves the model and runs that script with this executable. Thread-safety: a command-line tool.
#pragma once

#include <CLI/CLI.hpp>

#include "daemon/cli/cli_commands.h"

namespace hearth::daemon {

void add_bench_editor_command(CLI::App & bench, cli_state & state);

}  // namespace hearth::daemon
