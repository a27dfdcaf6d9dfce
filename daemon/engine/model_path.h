// model_path: which model file a command uses. One order for every command (the daemon,
// and so every editor's `hearth lsp`, as well as complete, chat and bench):
//   1. the explicit path (--model, or a FILE argument)
//   2. $HEARTH_MODEL
//   3. `model = "..."` in the config file (--config FILE, else ~/.config/hearth/config.toml)
//   4. the default model where scripts/fetch-model puts it:
//      ${XDG_CACHE_HOME:-~/.cache}/hearth/models/<k_default_model_file>
// Thread-safety: functions of the environment and the file system; no state.
#pragma once

#include <string>

#include "base/default_model.h"
#include "base/result.h"

namespace hearth::daemon {

// The default model's place (base/default_model.h): the daemon's and the tests' one lookup.
using hearth::default_model_path;
using hearth::k_default_model_file;

// The lookup with `config_model` already read from `config_file` ("" if it has none).
// The error says every way to give a model and where the default one was looked for.
result<std::string> resolve_model_path(const std::string & explicit_path, const std::string & config_model,
                                       const std::string & config_file);

// The lookup for a command without a --config flag: reads `model` from the default
// config file (an error in that file is reported, not skipped).
result<std::string> resolve_model_path(const std::string & explicit_path);

}  // namespace hearth::daemon
