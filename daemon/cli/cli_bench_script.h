// cli_bench_script: the benches whose work is a Python script beside the executable
// (`hearth bench quality`, `hearth bench editor`): finding the script's folder and running it
// with this executable and the resolved model. Thread-safety: a command-line tool.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace hearth::daemon {

// The folder of bench `name` that holds `script`: $HEARTH_BENCH_<NAME>_DIR, else beside an
// installed executable (<prefix>/share/hearth/bench/<name>), else the source tree of a build
// folder inside it (<source>/build/daemon/hearth). No source path is compiled in: the
// installed binary must not point into the tree it was built from.
result<std::string> bench_script_dir(const std::string & name, const std::string & script);

// This executable's path (/proc/self/exe).
result<std::string> self_executable();

// Runs argv, waits, and returns its exit status (127 when it could not start).
int run_and_wait(const std::vector<std::string> & argv);

}  // namespace hearth::daemon
