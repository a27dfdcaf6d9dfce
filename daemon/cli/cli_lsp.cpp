// `hearth lsp`: the stdio entry point editors spawn. It connects to the running daemon's
// Unix socket, or starts the daemon if none runs, and relays bytes both ways until either
// side closes. It never parses the protocol, so every editor shares one daemon and model.
// Two editors starting at the same moment are serialised by an flock on
// <runtime dir>/hearth.lock: the second one finds the first one's daemon when it gets the
// lock. The daemon is started detached (double fork + setsid, so it outlives the editor)
// and reports readiness through a pipe (HEARTH_READY_FD) instead of being polled for.
// Its exit code is the editor's to read: 0 when the editor sent `shutdown` before leaving
// (by `exit` or by closing the pipe), 1 after `exit` without `shutdown` (the LSP's rule, as
// `hearth daemon --stdio`) and 1 when the daemon ended the connection first (stopped, was
// killed, or refused it), with a message on stderr. For that it reads the editor's framing
// and the method of its small messages, and nothing else.
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <spdlog/spdlog.h>

#include "daemon/cli/cli_commands.h"
#include "daemon/cli/daemon_options.h"
#include "daemon/settings/config.h"
#include "daemon/server/logging.h"
#include "daemon/settings/runtime_dir.h"
#include "daemon/server/unix_client.h"
#include "lsp/framing.h"

namespace hearth::daemon {

namespace {

struct lsp_flags {
    // The shim's own socket, runtime dir, config and log level, and all of them passed to a
    // daemon this command starts (an already running one keeps its settings).
    daemon_options daemon;
    int start_timeout_ms = 30000;
    bool no_start = false;
};

// Starts `hearth daemon` detached and waits until it listens (or fails). The daemon's
// stdio goes to /dev/null: it logs to its log file.
status start_daemon(const lsp_flags & f, const std::string & socket, int timeout_ms) {
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0) return fail("pipe: ", std::strerror(errno));
    daemon_options forwarded = f.daemon;
    forwarded.socket = socket;   // the one this command connects to, resolved
    std::vector<std::string> args = {"hearth", "daemon"};
    for (auto & a : daemon_arguments(forwarded)) args.push_back(std::move(a));
    const pid_t child = ::fork();
    if (child < 0) return fail("fork: ", std::strerror(errno));
    if (child == 0) {
        // Intermediate child: new session, fork the daemon, exit, so the daemon is
        // re-parented to init and never becomes the editor's zombie.
        ::setsid();
        const pid_t daemon_pid = ::fork();
        if (daemon_pid != 0) ::_exit(daemon_pid < 0 ? 1 : 0);
        const int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(null, 2);
        const int wfd = ::fcntl(ready[1], F_DUPFD, 3);   // without CLOEXEC: survives exec
        ::setenv("HEARTH_READY_FD", std::to_string(wfd).c_str(), 1);
        std::vector<char *> argv;
        for (auto & a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv("/proc/self/exe", argv.data());
        ::_exit(127);
    }
    ::close(ready[1]);
    int st = 0;
    ::waitpid(child, &st, 0);
    pollfd p{ready[0], POLLIN, 0};
    int r;
    do r = ::poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    char byte = 0;
    const ssize_t n = r > 0 ? ::read(ready[0], &byte, 1) : 0;
    ::close(ready[0]);
    if (r == 0) return fail("the daemon did not report ready within ", timeout_ms, " ms");
    if (n != 1) return fail("the daemon exited during start-up (see its log, ", default_log_file(), ")");
    return {};
}

// What the editor said about ending the session, from its side of the stream. Bodies are
// parsed only when they are small and mention a method of interest: didChange and didOpen
// carry whole documents, and neither matters here.
class editor_stream_watch {
public:
    void feed(std::string_view bytes) {
        if (frames_.failed()) return;   // not LSP: the daemon will say so and close
        items_.clear();
        frames_.feed(bytes, items_);
        for (const auto & item : items_)
            if (const auto * body = std::get_if<std::string>(&item)) look_at(*body);
    }
    std::atomic<bool> saw_shutdown{false}, saw_exit{false}, editor_gone{false};

private:
    void look_at(const std::string & body) {
        if (body.size() > 4096 || (body.find("shutdown") == std::string::npos && body.find("exit") == std::string::npos)) return;
        boost::system::error_code ec;
        const auto v = boost::json::parse(body, ec);
        const auto * m = !ec && v.is_object() ? v.as_object().if_contains("method") : nullptr;
        if (!m || !m->is_string()) return;
        if (m->as_string() == "shutdown") saw_shutdown = true;
        else if (m->as_string() == "exit") saw_exit = true;
    }
    lsp::frame_reader frames_;
    std::vector<lsp::frame_item> items_;
};

int run_lsp_command(const lsp_flags & f) {
    std::signal(SIGPIPE, SIG_IGN);   // a vanished daemon or editor is an EPIPE, handled below
    daemon_config cfg;
    if (auto s = load_command_config(f.daemon.config, cfg); !s) {
        std::fprintf(stderr, "hearth lsp: %s\n", s.message().c_str());
        return 2;
    }
    // stdout is the editor's protocol stream: logs go to stderr (editors show it) only.
    (void)setup_logging(f.daemon.log_level.value_or("warn"), "", true);
    const std::string runtime = f.daemon.runtime_dir.value_or(cfg.runtime_dir.empty() ? default_runtime_dir() : cfg.runtime_dir);
    const std::string socket = daemon_socket_path(f.daemon.socket, f.daemon.runtime_dir, cfg.socket_path, cfg.runtime_dir);

    int fd = connect_unix(socket);
    if (fd < 0) {
        if (f.no_start) {
            spdlog::error("no daemon is listening on {} (and --no-start was given)", socket);
            return 1;
        }
        if (auto s = ensure_private_dir(runtime); !s) {
            spdlog::error("{}", s.message());
            return 1;
        }
        auto lock = file_lock::acquire(lock_path(runtime));
        if (!lock) {
            spdlog::error("{}", lock.message());
            return 1;
        }
        fd = connect_unix(socket);   // another editor may have started it while we waited
        if (fd < 0) {
            if (auto s = start_daemon(f, socket, f.start_timeout_ms); !s) {
                spdlog::error("starting the daemon: {}", s.message());
                return 1;
            }
            fd = connect_unix(socket);
        }
        if (fd < 0) {
            spdlog::error("cannot connect to {}: {}", socket, std::strerror(errno));
            return 1;
        }
    }
    // stdin -> daemon on a helper thread; daemon -> stdout here. When the editor closes
    // stdin, the write side is shut down so the daemon sees the end of the stream. What the
    // editor sent is looked at before it is forwarded, so the flags are set before the
    // daemon can act on it.
    auto watch = std::make_shared<editor_stream_watch>();
    std::thread up([fd, watch] {
        char buf[64 * 1024];
        for (;;) {
            const ssize_t n = ::read(0, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                watch->editor_gone = true;
                break;
            }
            watch->feed(std::string_view(buf, static_cast<size_t>(n)));
            if (!write_all(fd, buf, static_cast<size_t>(n))) break;
        }
        ::shutdown(fd, SHUT_WR);
    });
    up.detach();
    char buf[64 * 1024];
    int read_error = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) read_error = errno;
        if (n <= 0) break;
        if (!write_all(1, buf, static_cast<size_t>(n))) {
            watch->editor_gone = true;   // the editor stopped reading: it is leaving
            break;
        }
    }
    if (watch->saw_exit || watch->editor_gone) return watch->saw_shutdown ? 0 : 1;
    spdlog::error("the daemon closed the connection on {} before the editor sent exit{}{} (it stopped, was killed, or "
                  "refused this connection: see its log, {})",
                  socket, read_error ? ": " : "", read_error ? std::strerror(read_error) : "", default_log_file());
    return 1;
}

}  // namespace

void add_lsp_command(CLI::App & app, cli_state & state) {
    auto * cmd = app.add_subcommand("lsp", "Language server on stdio for editors: relays to the daemon, starting it if needed");
    auto f = std::make_shared<lsp_flags>();
    // The shim uses --socket, --runtime-dir, --config and --log-level itself too.
    add_daemon_options(cmd, f->daemon, "Daemon (passed to a daemon this command starts)");
    cmd->add_option("--start-timeout-ms", f->start_timeout_ms, "How long to wait for a started daemon")->check(CLI::Range(100, 600000));
    cmd->add_flag("--no-start", f->no_start, "Only connect; fail if no daemon runs");
    // Many LSP clients append --stdio to the server's command line; stdio is all this speaks.
    cmd->add_flag("--stdio")->description("Accepted and ignored: the editor's stdio is the only transport");
    cmd->callback([f, &state] { state.exit_code = run_lsp_command(*f); });
}

}  // namespace hearth::daemon
