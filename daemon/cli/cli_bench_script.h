// cli_bench_script: the benches whose work is a Python script beside the executable
// (`hearth bench quality`, `hearth bench editor`): their shared options, finding the script's
// folder, and running it with this executable and the resolved model. Thread-safety: a
// command-line tool.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace hearth::daemon {

// The options every side-by-side bench script takes (bench/common/hearth_bench.py).
struct bench_script_flags {
    std::string model, sides = "hearth,llama.cpp", json, llama_python, daemon_log;
    std::vector<std::string> daemon_args, settings;
    int threads = 0;
    bool busy = false, verbose = false;
};
void add_bench_script_options(CLI::App & cmd, bench_script_flags & f);

// Runs `python3 <dir>/<script> --hearth <this executable> --model <model> <args> <f's options>`,
// the folder of bench `name` being $HEARTH_BENCH_<NAME>_DIR, else beside an installed executable
// (<prefix>/share/hearth/bench/<name>), else the source tree of a build folder inside it
// (<source>/build/daemon/hearth): no source path is compiled in, the installed binary must not
// point into the tree it was built from. Returns the script's exit status; 2 (with the reason
// on stderr) when the model or the script cannot be found.
int run_bench_script(const std::string & name, const std::string & script, const bench_script_flags & f,
                     std::vector<std::string> args);

}  // namespace hearth::daemon
