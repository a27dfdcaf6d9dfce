// hearth: one background process that keeps a model warm and answers editors.
#include <cstdio>
#include <exception>

#include "daemon/cli/cli_commands.h"
#include "daemon/server/logging.h"

int main(int argc, char ** argv) {
    CLI::App app{"hearth: a local coding assistant (inline completion and chat over LSP)", "hearth"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "hearth " HEARTH_VERSION);
    // A command's stdout is its answer: the engine's log lines go to stderr, warnings only
    // (`hearth daemon` and `hearth lsp` set up their own logging).
    (void)hearth::daemon::setup_logging("warn", "", true);
    hearth::daemon::cli_state state;
    hearth::daemon::add_version_command(app, state);
    hearth::daemon::add_daemon_command(app, state);
    hearth::daemon::add_lsp_command(app, state);
    hearth::daemon::add_status_command(app, state);
    hearth::daemon::add_model_commands(app, state);
    hearth::daemon::add_generate_commands(app, state);
    hearth::daemon::add_bench_commands(app, state);
    hearth::daemon::add_pull_commands(app, state);
    hearth::daemon::add_devices_command(app, state);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError & e) {
        return app.exit(e);
    } catch (const std::exception & e) {
        std::fprintf(stderr, "hearth: %s\n", e.what());
        return 1;
    }
    return state.exit_code;
}
