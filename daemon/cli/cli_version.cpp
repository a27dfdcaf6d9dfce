#include <cstdio>

#include "daemon/cli/cli_commands.h"

#ifndef HEARTH_VERSION
#define HEARTH_VERSION "0.1.0"
#endif

namespace hearth::daemon {

void add_version_command(CLI::App & app, cli_state & state) {
    auto * cmd = app.add_subcommand("version", "Print hearth's version");
    cmd->callback([&state] {
        std::printf("hearth %s\n", HEARTH_VERSION);
        state.exit_code = 0;
    });
}

}  // namespace hearth::daemon
