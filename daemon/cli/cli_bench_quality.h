// bench_quality: `hearth bench quality` measures completion quality through the daemon's real
// LSP path, beside llama.cpp on the same model. The work is in bench/quality/run_quality.py
// (it starts `hearth daemon`, speaks LSP to it and scores the answers in Python, whose ast
// module is the Python oracle); this command resolves the model and runs that script with
// this executable. Thread-safety: a command-line tool.
#pragma once

#include <CLI/CLI.hpp>

#include "daemon/cli/cli_commands.h"

namespace hearth::daemon {

void add_bench_quality_command(CLI::App & bench, cli_state & state);

}  // namespace hearth::daemon
