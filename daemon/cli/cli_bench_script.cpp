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

namespace hearth::daemon {

result<std::string> self_executable() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return fail("cannot find this executable: ", ec.message());
    return self.string();
}

result<std::string> bench_script_dir(const std::string & name, const std::string & script) {
    std::string var = "HEARTH_BENCH_" + name + "_DIR";
    std::transform(var.begin(), var.end(), var.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (const char * d = std::getenv(var.c_str()); d && *d) return std::string(d);
    auto self = self_executable();
    if (!self) return self.error();
    const auto bin = std::filesystem::path(*self).parent_path();
    for (const auto & dir : {bin / ".." / "share" / "hearth" / "bench" / name, bin / ".." / ".." / "bench" / name}) {
        std::error_code ec;
        if (std::filesystem::exists(dir / script, ec)) return std::filesystem::weakly_canonical(dir, ec).string();
    }
    return fail("cannot find the bench's scripts (", script, ") beside ", *self, "; set ", var, " to the bench/", name,
                " folder of a hearth source tree");
}

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

}  // namespace hearth::daemon
