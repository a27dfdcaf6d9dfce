// daemon_options: the settings `hearth daemon` takes on its command line, described once:
// `hearth daemon` applies them over the config file, and `hearth lsp` takes the same ones
// and forwards them to a daemon it starts, so the two commands cannot drift apart.
// Thread-safety: used from main() only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/result.h"
#include "daemon/settings/config.h"

namespace hearth::daemon {

struct daemon_options {
    std::optional<std::string> model, socket, runtime_dir, config, log_file, log_level, cache_type, cache_type_k,
        cache_type_v, kv_budget, chat_template, slot_dir, gpu_layers, speculate, draft;
    std::optional<int32_t> threads;
};

// Adds the options to cmd; group: the heading they are listed under in --help ("" : none).
void add_daemon_options(CLI::App * cmd, daemon_options & o, const std::string & group);

// The options that were given, as `hearth daemon` arguments (for a daemon started by `hearth lsp`).
std::vector<std::string> daemon_arguments(const daemon_options & o);

// The options that were given, over cfg (the config file's values); a bad value is an error
// naming the option.
status apply_daemon_options(const daemon_options & o, daemon_config & cfg);

}  // namespace hearth::daemon
