#include "daemon/engine/model_path.h"

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "daemon/settings/config.h"

namespace hearth::daemon {

result<std::string> resolve_model_path(const std::string & explicit_path, const std::string & config_model,
                                       const std::string & config_file) {
    if (!explicit_path.empty()) return explicit_path;
    if (const char * env = std::getenv("HEARTH_MODEL"); env && *env) return std::string(env);
    if (!config_model.empty()) return config_model;
    const std::string fallback = default_model_path();
    std::error_code ec;
    if (!fallback.empty() && std::filesystem::exists(fallback, ec)) return fallback;
    return fail("no model: pass --model PATH, set HEARTH_MODEL, put `model = \"PATH\"` in ", config_file,
                ", or download the default model (scripts/fetch-model) to ",
                fallback.empty() ? std::string("~/.cache/hearth/models/") + k_default_model_file : fallback);
}

result<std::string> resolve_model_path(const std::string & explicit_path) {
    if (!explicit_path.empty()) return explicit_path;
    daemon_config cfg;
    if (auto s = load_command_config(std::nullopt, cfg); !s) return s.error();
    return resolve_model_path(explicit_path, cfg.model_path, default_config_file());
}

}  // namespace hearth::daemon
