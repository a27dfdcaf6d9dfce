// model_path: which model file a command uses when none is named. The order: an explicit
// --model/FILE, then $HEARTH_MODEL, then the default model where scripts/fetch-model puts
// it (${XDG_CACHE_HOME:-~/.cache}/hearth/models/, the name in k_default_model_file).
// Thread-safety: pure functions of the environment.
#pragma once

#include <string>

#include "base/result.h"

namespace hearth::daemon {

// The file name scripts/fetch-model gives the default model.
extern const char * const k_default_model_file;

// Resolves the model path; the error tells the user how to get a model.
result<std::string> resolve_model_path(const std::string & explicit_path);

}  // namespace hearth::daemon
