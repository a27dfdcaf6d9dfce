#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <unistd.h>

#include "daemon/engine/model_path.h"

using namespace hearth::daemon;
namespace fs = std::filesystem;

namespace {

// Sets (or unsets) one environment variable for a scope, restoring it afterwards.
class scoped_env {
public:
    scoped_env(const char * name, const char * value) : name_(name) {
        if (const char * old = std::getenv(name)) old_ = old;
        if (value) ::setenv(name, value, 1);
        else ::unsetenv(name);
    }
    ~scoped_env() {
        if (old_) ::setenv(name_, old_->c_str(), 1);
        else ::unsetenv(name_);
    }

private:
    const char * name_;
    std::optional<std::string> old_;
};

// A private cache and config folder; `with_default` puts a default.gguf into the cache.
struct home {
    fs::path root = fs::temp_directory_path() / ("hearth-model-path-" + std::to_string(::getpid()));
    fs::path default_model = root / "cache" / "hearth" / "models" / k_default_model_file;
    fs::path config = root / "config" / "hearth" / "config.toml";
    explicit home(bool with_default) {
        fs::remove_all(root);
        fs::create_directories(default_model.parent_path());
        fs::create_directories(config.parent_path());
        if (with_default) std::ofstream(default_model) << "GGUF";
    }
    ~home() { fs::remove_all(root); }
    void write_config(const std::string & text) const { std::ofstream(config) << text; }
};

}  // namespace

TEST_CASE("model lookup: explicit path, then HEARTH_MODEL, then the config, then the default model", "[daemon][model_path]") {
    home h(true);
    scoped_env cache("XDG_CACHE_HOME", (h.root / "cache").c_str());
    scoped_env config("XDG_CONFIG_HOME", (h.root / "config").c_str());
    scoped_env env("HEARTH_MODEL", nullptr);

    CHECK(*resolve_model_path("", "", h.config.string()) == h.default_model.string());
    CHECK(*resolve_model_path("", "/models/from-config.gguf", h.config.string()) == "/models/from-config.gguf");
    {
        scoped_env set("HEARTH_MODEL", "/models/from-env.gguf");
        CHECK(*resolve_model_path("", "/models/from-config.gguf", h.config.string()) == "/models/from-env.gguf");
        CHECK(*resolve_model_path("/models/explicit.gguf", "/models/from-config.gguf", h.config.string()) == "/models/explicit.gguf");
    }
    // The one-argument form reads `model` from the default config file.
    CHECK(*resolve_model_path("") == h.default_model.string());
    h.write_config("model = \"/models/from-config.gguf\"\n");
    CHECK(*resolve_model_path("") == "/models/from-config.gguf");
    CHECK(*resolve_model_path("/models/explicit.gguf") == "/models/explicit.gguf");
}

TEST_CASE("model lookup: HOME/.cache when XDG_CACHE_HOME is unset", "[daemon][model_path]") {
    home h(false);
    fs::create_directories(h.root / ".cache" / "hearth" / "models");
    std::ofstream(h.root / ".cache" / "hearth" / "models" / k_default_model_file) << "GGUF";
    scoped_env cache("XDG_CACHE_HOME", nullptr);
    scoped_env config("XDG_CONFIG_HOME", (h.root / "config").c_str());
    scoped_env home_dir("HOME", h.root.c_str());
    scoped_env env("HEARTH_MODEL", nullptr);
    CHECK(*resolve_model_path("", "", h.config.string()) == (h.root / ".cache" / "hearth" / "models" / k_default_model_file).string());
}

TEST_CASE("model lookup: nothing found says every way to give one and where it looked", "[daemon][model_path]") {
    home h(false);
    scoped_env cache("XDG_CACHE_HOME", (h.root / "cache").c_str());
    scoped_env config("XDG_CONFIG_HOME", (h.root / "config").c_str());
    scoped_env env("HEARTH_MODEL", nullptr);
    auto r = resolve_model_path("", "", h.config.string());
    REQUIRE_FALSE(r);
    INFO(r.message());
    CHECK(r.message().find("--model") != std::string::npos);
    CHECK(r.message().find("HEARTH_MODEL") != std::string::npos);
    CHECK(r.message().find("model = ") != std::string::npos);
    CHECK(r.message().find(h.default_model.string()) != std::string::npos);
    // A broken config file is named, not skipped.
    h.write_config("modle = 1\n");
    auto bad = resolve_model_path("");
    REQUIRE_FALSE(bad);
    CHECK(bad.message().find(h.config.string()) != std::string::npos);
}
