// Helpers for tests that run the repo's Python scripts (tests/python/, with the `gguf` package
// from .venv): a temporary folder removed at the end of the test, and running a script.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <unistd.h>

namespace hearth::inference::testing {

struct temp_dir {
    std::filesystem::path path;
    temp_dir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "hearth-gguf-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    temp_dir(const temp_dir &) = delete;
    temp_dir & operator=(const temp_dir &) = delete;
};

// 'text' for the shell (the paths here have no quotes in them).
inline std::string quoted(const std::string & text) { return "'" + text + "'"; }

// Runs tests/python/<script> with the repo's Python; args are passed to the shell as given.
inline void run_python(const std::string & script, const std::string & args) {
    const std::string cmd = quoted(HEARTH_PYTHON) + ' ' +
                            quoted(std::string(HEARTH_SOURCE_DIR) + "/tests/python/" + script) + ' ' + args;
    INFO("running " << cmd);
    REQUIRE(std::system(cmd.c_str()) == 0);
}

}  // namespace hearth::inference::testing
