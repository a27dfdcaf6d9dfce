#include "daemon/model_path.h"

#include <cstdlib>
#include <filesystem>

namespace hearth::daemon {

const char * const k_default_model_file = "default.gguf";

result<std::string> resolve_model_path(const std::string & explicit_path) {
    namespace fs = std::filesystem;
    if (!explicit_path.empty()) return explicit_path;
    if (const char * env = std::getenv("HEARTH_MODEL"); env && *env) return std::string(env);
    fs::path cache;
    if (const char * xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) cache = xdg;
    else if (const char * home = std::getenv("HOME"); home && *home) cache = fs::path(home) / ".cache";
    if (!cache.empty()) {
        const fs::path p = cache / "hearth" / "models" / k_default_model_file;
        std::error_code ec;
        if (fs::exists(p, ec)) return p.string();
    }
    return fail("no model given and the default model is not downloaded: pass --model PATH, set HEARTH_MODEL, "
                "or run scripts/fetch-model");
}

}  // namespace hearth::daemon
