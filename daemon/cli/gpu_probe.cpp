#include "daemon/cli/gpu_probe.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <cstring>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "inference/device/device_registry.h"

extern char ** environ;

namespace hearth::daemon {

std::optional<probe_line> parse_probe_line(std::string_view line) {
    std::vector<std::string_view> f;
    for (size_t start = 0;;) {
        const size_t tab = line.find('\t', start);
        f.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
        if (tab == std::string_view::npos) break;
        start = tab + 1;
    }
    if (f.size() != 4 || f[0].empty() || (f[1] != "gpu" && f[1] != "cpu" && f[1] != "none")) return std::nullopt;
    return probe_line{std::string(f[0]), std::string(f[1]), std::string(f[3])};
}

std::string format_probe_line(std::string_view backend, std::string_view kind, uint64_t bytes, std::string_view name) {
    std::string line;
    line.append(backend).append("\t").append(kind).append("\t").append(std::to_string(bytes)).append("\t");
    return line.append(name).append("\n");
}

std::optional<std::string> no_gpu_reason(std::string_view out) {
    std::string why;
    const auto add = [&](const std::string & s) { why += (why.empty() ? "" : "; ") + s; };
    size_t lines = 0;
    for (size_t start = 0; start < out.size();) {
        const size_t nl = out.find('\n', start);
        const std::string_view line = out.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
        start = nl == std::string_view::npos ? out.size() : nl + 1;
        auto p = parse_probe_line(line);
        if (!p) continue;
        ++lines;
        if (p->kind == "gpu") return std::nullopt;
        if (p->kind == "cpu") add("no " + p->backend + " GPU: " + p->name + " is a CPU device");
        else add(p->name);
    }
    if (lines == 0) return std::string("the GPU probe said nothing");
    return why;
}

std::optional<std::string> probe_no_gpu() {
    if (inference::device_backends().empty()) return std::string(inference::k_no_gpu_backend);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return "the GPU probe: pipe: " + std::string(std::strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char arg0[] = "hearth", arg1[] = "devices", arg2[] = "--probe";
    char * argv[] = {arg0, arg1, arg2, nullptr};
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        return "the GPU probe could not start: " + std::string(std::strerror(rc));
    }
    std::string out;
    bool timed_out = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(k_gpu_probe_timeout_ms);
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) { timed_out = true; break; }
        pollfd p{fds[0], POLLIN, 0};
        const int n = ::poll(&p, 1, static_cast<int>(left.count()));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { timed_out = n == 0; break; }
        char buf[4096];
        const ssize_t got = ::read(fds[0], buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;   // the child closed its end: done
        out.append(buf, static_cast<size_t>(got));
    }
    ::close(fds[0]);
    if (timed_out) ::kill(pid, SIGKILL);
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (timed_out) return "the GPU probe did not answer within " + std::to_string(k_gpu_probe_timeout_ms / 1000) + " s";
    if (WIFSIGNALED(st)) return "the GPU probe died of signal " + std::to_string(WTERMSIG(st)) + " (a driver crashed)";
    return no_gpu_reason(out);
}

}  // namespace hearth::daemon
