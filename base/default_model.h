// Where models live: ${XDG_CACHE_HOME:-~/.cache}/hearth/models/, and there default.gguf, the link
// to the default model that scripts/fetch-model and `hearth pull` write. One place for the
// daemon's model lookup (daemon/engine/model_path.h), its model cache (daemon/models/), the KV
// slot files (inference/session/slot_store.h) and the tests that need the models.
// Thread-safety: reads the environment only.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace hearth {

// The file name the default model's link has in the model cache.
inline constexpr const char * k_default_model_file = "default.gguf";

// ${XDG_CACHE_HOME:-~/.cache}/hearth, hearth's cache (models, downloads, KV slots). An
// XDG_CACHE_HOME that is not absolute is ignored, as the XDG spec says. "" when neither is set.
inline std::filesystem::path hearth_cache_dir() {
    namespace fs = std::filesystem;
    if (const char * xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') return fs::path(xdg) / "hearth";
    if (const char * home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "hearth";
    return {};
}

// hearth_cache_dir()/models, the model cache ("" as hearth_cache_dir).
inline std::filesystem::path model_cache_dir() {
    const auto root = hearth_cache_dir();
    return root.empty() ? root : root / "models";
}

// The default model's link in the model cache ("" as model_cache_dir); it may not exist.
inline std::string default_model_path() {
    const auto dir = model_cache_dir();
    return dir.empty() ? std::string() : (dir / k_default_model_file).string();
}

}  // namespace hearth
