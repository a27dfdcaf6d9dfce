// hearth_process: runs the real `hearth` binary from the daemon's tests (found through
// HEARTH_BINARY_DIR, which ctest sets): a child with its stdin/stdout on pipes and its stderr
// in a file, waiting for its exit with a deadline, and the small file helpers those tests share.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

namespace hearth::daemon::testing {

inline std::string hearth_binary() {
    const char * dir = std::getenv("HEARTH_BINARY_DIR");
    INFO("HEARTH_BINARY_DIR is not set: run through ctest, or set it to the build directory");
    REQUIRE(dir != nullptr);
    const std::string bin = std::string(dir) + "/daemon/hearth";
    INFO(bin);
    REQUIRE(::access(bin.c_str(), X_OK) == 0);
    return bin;
}

inline std::string temp_dir() {
    char tmpl[] = "/tmp/hearth-b-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    return tmpl;
}

struct child {
    pid_t pid = -1;
    int to_child = -1;     // its stdin
    int from_child = -1;   // its stdout
};

// Starts `hearth args...` with stdin/stdout on pipes and stderr into `log`; env: "NAME=value"
// entries set in the child's environment.
inline child spawn(const std::vector<std::string> & args, const std::string & log,
                   const std::vector<std::string> & env = {}) {
    std::signal(SIGPIPE, SIG_IGN);
    int in[2], out[2];
    REQUIRE(::pipe(in) == 0);
    REQUIRE(::pipe(out) == 0);
    const std::string bin = hearth_binary();
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // The test ignores SIGPIPE; the child must start with the default, as from a shell.
        std::signal(SIGPIPE, SIG_DFL);
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        const int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
        ::dup2(err, 2);
        for (int fd = 3; fd < 256; ++fd) ::close(fd);
        for (const auto & e : env) {
            const size_t eq = e.find('=');
            ::setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
        }
        std::vector<char *> argv;
        std::vector<std::string> all = {bin};
        all.insert(all.end(), args.begin(), args.end());
        for (auto & a : all) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(bin.c_str(), argv.data());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    return {pid, in[1], out[0]};
}

// The exit code, or 128 + the signal that killed it.
inline int wait_exit(pid_t pid, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    int st = 0;
    while (std::chrono::steady_clock::now() < end) {
        const pid_t r = ::waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &st, 0);
    FAIL("process " << pid << " did not exit in time");
    return -1;
}

// Everything a child writes to stdout until it closes it.
inline std::string read_to_end(int fd) {
    std::string out;
    char chunk[4096];
    for (ssize_t n; (n = ::read(fd, chunk, sizeof chunk)) > 0;) out.append(chunk, static_cast<size_t>(n));
    ::close(fd);
    return out;
}

inline std::string slurp(const std::string & path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace hearth::daemon::testing
