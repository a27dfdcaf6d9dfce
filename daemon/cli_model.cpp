#include <cstdio>
#include <string>

#include "daemon/cli_commands.h"

namespace hearth::daemon {

void add_model_commands(CLI::App & app, cli_state & state) {
    auto * model = app.add_subcommand("model", "Inspect model files");
    model->require_subcommand(1);
    auto * info = model->add_subcommand("info", "Print what a GGUF model contains and what it costs to run");
    auto * file = new std::string;  // lives as long as the app
    info->add_option("file", *file, "GGUF file (default: the default model)");
    info->callback([&state, file] {
        std::fprintf(stderr, "hearth model info: reading %s\n", file->c_str());
        state.exit_code = 1;
    });
}

}  // namespace hearth::daemon
