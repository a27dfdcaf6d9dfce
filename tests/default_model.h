// The default model for the tests that read it: $HEARTH_DEFAULT_MODEL where set (scripts/test sets
// it), else where hearth itself finds it (base/default_model.h), so a plain `ctest` in the build
// folder runs them too. Likewise the other pinned models, which scripts/test fetches. Without the
// file the case is skipped, never passed.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/default_model.h"
#include "tests/skip.h"

namespace hearth::test {

// The default model's file, links followed (the golden folders are named after the pinned file,
// and default.gguf is a link to it), or "" when there is no such file.
inline std::string default_model_file() {
    std::string path;
    if (const char * env = std::getenv("HEARTH_DEFAULT_MODEL"); env && *env) path = env;
    else path = default_model_path();
    std::error_code ec;
    if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return {};
    const auto real = std::filesystem::canonical(path, ec);
    return ec ? path : real.string();
}

// A pinned model in the model cache by its name (scripts/models.lock), or "" when it is not there.
inline std::string pinned_model_file(const std::string & name) {
    const auto dir = model_cache_dir();
    std::error_code ec;
    if (dir.empty() || !std::filesystem::is_regular_file(dir / (name + ".gguf"), ec)) return {};
    return (dir / (name + ".gguf")).string();
}

}  // namespace hearth::test

// Declares `const std::string var`, the default model's path, or skips the case without it.
#define HEARTH_DEFAULT_MODEL_OR_SKIP(var)                                                                   \
    const std::string var = ::hearth::test::default_model_file();                                           \
    if (var.empty())                                                                                         \
    HEARTH_SKIP("no default model ($HEARTH_DEFAULT_MODEL, else " << ::hearth::default_model_path()          \
                                                                 << "): scripts/fetch-model downloads it")
