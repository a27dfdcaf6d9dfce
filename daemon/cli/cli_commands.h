// The `hearth` command line: each subcommand lives in its own daemon/cli/cli_<name>.cpp and
// registers itself here. A subcommand's callback sets `exit_code` instead of calling exit().
// Thread-safety: used from main() only.
#pragma once

#include <CLI/CLI.hpp>

namespace hearth::daemon {

struct cli_state {
    int exit_code = 0;
};

void add_model_commands(CLI::App & app, cli_state & state);     // hearth model info
void add_version_command(CLI::App & app, cli_state & state);    // hearth version
void add_daemon_command(CLI::App & app, cli_state & state);     // hearth daemon
void add_lsp_command(CLI::App & app, cli_state & state);        // hearth lsp (the editor's stdio shim)
void add_status_command(CLI::App & app, cli_state & state);     // hearth status (asks the running daemon)
void add_generate_commands(CLI::App & app, cli_state & state);  // hearth complete, hearth chat
void add_bench_commands(CLI::App & app, cli_state & state);     // hearth bench, hearth bench trace
void add_pull_commands(CLI::App & app, cli_state & state);      // hearth pull, hearth models [rm]
void add_devices_command(CLI::App & app, cli_state & state);    // hearth devices

}  // namespace hearth::daemon
