// Where models live: ${XDG_CACHE_HOME:-~/.cache}/hearth/models/, and there default.gguf, the link
// to the default model that scripts/fetch-model and `hearth pull` write. One place for the
// daemon's model lookup (daemon/engine/model_path.h) and for the tests that need the models.
// Thread-safety: reads the environment only.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace hearth {

// The file name the default model's link has in the model cache.
inline constexpr const char * k_default_model_file = "default.gguf";

// ${XDG_CACHE_HOME:-~/.cache}/hearth/models, the model cache ("" when neither is set).
inline std::filesystem::path model_cache_dir() {
    namespace fs = std::filesystem;
    fs::path cache;
    if (const char * xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) cache = xdg;
    else if (const char * home = std::getenv("HOME"); home && *home) cache = fs::path(home) / ".cache";
    if (cache.empty()) return {};
    return cache / "hearth" / "models";
}

// The default model's link in the model cache ("" as model_cache_dir); it may not exist.
inline std::string default_model_path() {
    const auto dir = model_cache_dir();
    return dir.empty() ? std::string() : (dir / k_default_model_file).string();
}

}  // namespace hearth
