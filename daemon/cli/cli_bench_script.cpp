#include "daemon/cli/cli_bench_script.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "base/result.h"
#include "daemon/engine/model_path.h"

namespace hearth::daemon {
namespace {

result<std::string> self_executable() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return fail("cannot find this executable: ", ec.message());
    return self.string();
}

result<std::string> script_dir(const std::string & name, const std::string & script, const std::string & self) {
    std::string var = "HEARTH_BENCH_" + name + "_DIR";
    std::transform(var.begin(), var.end(), var.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (const char * d = std::getenv(var.c_str()); d && *d) return std::string(d);
    const auto bin = std::filesystem::path(self).parent_path();
    for (const auto & dir : {bin / ".." / "share" / "hearth" / "bench" / name, bin / ".." / ".." / "bench" / name}) {
        std::error_code ec;
        if (std::filesystem::exists(dir / script, ec)) return std::filesystem::weakly_canonical(dir, ec).string();
    }
    return fail("cannot find the bench's scripts (", script, ") beside ", self, "; set ", var, " to the bench/", name,
                " folder of a hearth source tree");
}

// Runs argv, waits, and returns its exit status (127 when it could not start).
int run_and_wait(const std::vector<std::string> & argv) {
    std::vector<char *> cargv;
    for (const auto & a : argv) cargv.push_back(const_cast<char *>(a.c_str()));
    cargv.push_back(nullptr);
    std::fflush(stdout);
    const pid_t pid = ::fork();
    if (pid < 0) return 127;
    if (pid == 0) {
        ::execvp(cargv[0], cargv.data());
        std::fprintf(stderr, "hearth bench: cannot run %s: %s\n", cargv[0], std::strerror(errno));
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void add_bench_script_options(CLI::App & cmd, bench_script_flags & f) {
    cmd.add_option("-m,--model", f.model, "GGUF model file (default: the downloaded default model)");
    cmd.add_option("--sides", f.sides, "what to measure: hearth, llama.cpp (comma-separated)")->capture_default_str();
    cmd.add_flag("--busy", f.busy, "run with a same-priority busy process on one core");
    cmd.add_option("-t,--threads", f.threads, "llama.cpp's threads (0: every CPU it may use)")->capture_default_str();
    cmd.add_option("--llama-python", f.llama_python, "python of the llama-cpp-python environment (default: .venv-llamacpp)");
    cmd.add_option("--daemon-arg", f.daemon_args, "extra argument for `hearth daemon` (repeatable)")->allow_extra_args(false);
    cmd.add_option("--setting", f.settings, "a daemon setting SECTION.KEY=VALUE, e.g. completion.time-budget-ms=60000 (default: all defaults)")
        ->allow_extra_args(false);
    cmd.add_option("--json", f.json, "also write every answer and the summary to this file");
    cmd.add_option("--daemon-log", f.daemon_log, "keep the daemon's log (at debug level) in this file");
    cmd.add_flag("-v,--verbose", f.verbose, "print every answer next to the expected one");
}

int run_bench_script(const std::string & name, const std::string & script, const bench_script_flags & f,
                     std::vector<std::string> args) {
    auto path = resolve_model_path(f.model);
    auto self = self_executable();
    auto dir = self ? script_dir(name, script, *self) : result<std::string>(self.error());
    if (!path || !dir) {
        std::fprintf(stderr, "hearth bench %s: %s\n", name.c_str(), (!path ? path.message() : dir.message()).c_str());
        return 2;
    }
    std::vector<std::string> argv{"python3", *dir + "/" + script, "--hearth", *self, "--model", *path};
    argv.insert(argv.end(), args.begin(), args.end());
    auto add = [&argv](const char * flag, const std::string & v) { if (!v.empty()) { argv.push_back(flag); argv.push_back(v); } };
    add("--sides", f.sides);
    add("--threads", std::to_string(f.threads));
    add("--json", f.json);
    add("--llama-python", f.llama_python);
    add("--daemon-log", f.daemon_log);
    for (const auto & a : f.daemon_args) argv.push_back("--daemon-arg=" + a);
    for (const auto & a : f.settings) add("--setting", a);
    if (f.busy) argv.push_back("--busy");
    if (f.verbose) argv.push_back("--verbose");
    return run_and_wait(argv);
}

}  // namespace hearth::daemon
