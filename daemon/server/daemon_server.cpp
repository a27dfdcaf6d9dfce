#include "daemon/server/daemon_server.h"

#include <csignal>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "daemon/server/auth.h"
#include "inference/gguf/mapped_file.h"

namespace hearth::daemon {

namespace asio = boost::asio;
using local = asio::local::stream_protocol;

namespace {

std::string dir_of(const std::string & path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

// Peer credentials of a Unix socket: only this user may talk to the daemon (the socket's
// mode already says so; this also covers a socket path in a directory we do not control).
bool peer_is_this_user(local::socket & s, std::string & why) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(s.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        why = std::string("SO_PEERCRED: ") + std::strerror(errno);
        return false;
    }
    if (cred.uid != ::getuid()) {
        why = "peer uid " + std::to_string(cred.uid) + " is not this user's (" + std::to_string(::getuid()) + ")";
        return false;
    }
    return true;
}

status write_small_file(const std::string & path, const std::string & text) {
    const std::string tmp = path + ".tmp";
    FILE * f = std::fopen(tmp.c_str(), "w");
    if (!f) return fail(tmp, ": ", std::strerror(errno));
    ::fchmod(fileno(f), 0600);
    std::fputs(text.c_str(), f);
    if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) return fail(path, ": ", std::strerror(errno));
    return {};
}

}  // namespace

daemon_server::daemon_server(daemon_config cfg, std::unique_ptr<model_service> model)
    : cfg_(std::move(cfg)),
      model_(std::move(model)),
      ctl_(boost::asio::make_strand(io_)),
      sched_(std::make_shared<scheduler>(scheduler_limits{cfg_.limits.max_queued})),
      services_(std::make_unique<services>(sched_, model_.get(), cfg_)),
      signals_(ctl_),
      shutdown_deadline_(ctl_),
      unix_backoff_(io_),
      tcp_backoff_(io_) {}

daemon_server::~daemon_server() {
    sched_->stop();
    for (const auto & f : files_to_remove_) ::unlink(f.c_str());
}

session_options daemon_server::make_session_options(bool needs_auth) {
    session_options o;
    o.partial_message_timeout = std::chrono::milliseconds(cfg_.limits.partial_message_timeout_ms);
    o.max_write_buffer_bytes = cfg_.limits.max_write_buffer_bytes;
    if (needs_auth) {
        o.auth_token = token_;
        o.auth_timeout = std::chrono::milliseconds(cfg_.limits.auth_timeout_ms);
        o.admit_after_auth = [this](session & s) { return admit_authenticated(s); };
    }
    o.server_limits.max_requests_in_flight = cfg_.limits.max_requests_in_flight;
    o.server_limits.documents.max_documents = cfg_.limits.max_documents;
    o.server_limits.documents.max_document_bytes = cfg_.limits.max_document_bytes;
    o.framing_limits.max_body_bytes = cfg_.limits.max_message_bytes;
    return o;
}

status daemon_server::start() {
    std::signal(SIGPIPE, SIG_IGN);   // a vanished client is an EPIPE, never a dead daemon
    // A model file cut short under the mapping ends the process from a SIGBUS handler: its
    // message goes to the log file as well as stderr (which a started daemon points at /dev/null).
    inference::gguf::mapped_file::set_fault_log_file(cfg_.log_file == "none" ? "" : cfg_.log_file.empty() ? default_log_file() : cfg_.log_file);
    runtime_dir_ = cfg_.runtime_dir.empty() ? default_runtime_dir() : cfg_.runtime_dir;
    if (cfg_.socket_path != "none") {
        if (auto s = start_unix(); !s) return s;
    }
    if (cfg_.tcp_port >= 0) {
        if (auto s = start_tcp(); !s) return s;
    }
    if (cfg_.http_port >= 0) {
        if (auto s = start_http(); !s) return s;
    }
    if (cfg_.stdio) {
        if (auto s = start_stdio(); !s) return s;
    }
    signals_.add(SIGINT);
    signals_.add(SIGTERM);
    signals_.async_wait([this](boost::system::error_code ec, int sig) {
        if (ec) return;
        spdlog::info("signal {}: shutting down", sig);
        begin_shutdown();
    });
    started_ = true;
    return {};
}

status daemon_server::start_unix() {
    socket_path_ = cfg_.socket_path.empty() ? runtime_dir_ + "/hearth.sock" : cfg_.socket_path;
    if (socket_path_.size() >= sizeof(sockaddr_un::sun_path))
        return fail("socket path ", socket_path_, ": longer than the ", sizeof(sockaddr_un::sun_path) - 1, " bytes a Unix socket allows");
    if (auto s = ensure_private_dir(dir_of(socket_path_)); !s) return fail("socket directory: ", s.message());
    // Held for the daemon's life: a second daemon on the same socket fails here instead of
    // unlinking the first one's live socket.
    auto lock = file_lock::try_acquire(socket_path_ + ".lock");
    if (!lock) return fail("another hearth daemon is already serving ", socket_path_, " (", lock.message(), ")");
    socket_lock_.emplace(std::move(*lock));
    // The lock file names the daemon that holds it (for `kill`, scripts and tests).
    if (const int fd = ::open((socket_path_ + ".lock").c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW); fd >= 0) {
        const std::string pid = std::to_string(::getpid()) + "\n";
        if (::write(fd, pid.data(), pid.size()) < 0) spdlog::debug("{}.lock: cannot write the pid", socket_path_);
        ::close(fd);
    }

    struct stat st {};
    if (::lstat(socket_path_.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) return fail(socket_path_, ": exists and is not a socket; refusing to replace it");
        // Holding the lock means no daemon serves it: the file is left over from a crash.
        ::unlink(socket_path_.c_str());
    }
    try {
        unix_acceptor_.emplace(io_);
        unix_acceptor_->open();
        const mode_t old = ::umask(0177);   // the socket file is created 0600
        boost::system::error_code ec;
        unix_acceptor_->bind(local::endpoint(socket_path_), ec);
        ::umask(old);
        if (ec) return fail("socket ", socket_path_, ": bind: ", ec.message());
        ::chmod(socket_path_.c_str(), 0600);
        unix_acceptor_->listen();
    } catch (const boost::system::system_error & e) {
        return fail("socket ", socket_path_, ": ", e.what());
    }
    files_to_remove_.push_back(socket_path_);
    spdlog::info("listening on unix socket {}", socket_path_);
    accept_unix();
    return {};
}

status daemon_server::ensure_token() {
    if (!token_.empty()) return {};
    if (auto s = ensure_private_dir(runtime_dir_); !s) return fail("runtime directory: ", s.message());
    auto tok = generate_token();
    if (!tok) return tok.error();
    const std::string tpath = token_path(runtime_dir_);
    if (auto s = write_token_file(tpath, *tok); !s) return s;
    token_ = *tok;
    files_to_remove_.push_back(tpath);
    return {};
}

status daemon_server::start_http() {
    http_server_options o;
    o.port = static_cast<uint16_t>(cfg_.http_port);
    if (!cfg_.http_no_token) {
        std::string token;
        if (!cfg_.http_token_file.empty()) {
            auto t = read_token_file(cfg_.http_token_file);
            if (!t) return fail("http-token-file: ", t.message());
            token = *t;
        } else {
            if (auto s = ensure_token(); !s) return s;
            token = token_;
        }
        o.token_ok = [token](std::string_view presented) { return tokens_equal(presented, token); };
    } else {
        spdlog::warn("the HTTP API takes requests without a token (http-no-token): any local process may use it");
    }
    o.max_body_bytes = cfg_.limits.max_message_bytes;
    o.max_connections = cfg_.limits.max_connections;
    o.max_unauthenticated = cfg_.limits.max_unauthenticated;
    o.max_write_buffer_bytes = cfg_.limits.max_write_buffer_bytes;
    o.request_timeout = std::chrono::milliseconds(cfg_.limits.partial_message_timeout_ms);
    o.auth_timeout = std::chrono::milliseconds(cfg_.limits.auth_timeout_ms);
    http_api_ = std::make_unique<http_api>(sched_, model_.get(), &services_->completion().pipeline(), cfg_);
    http_ = std::make_unique<http_server>(io_, *http_api_, std::move(o));
    if (auto s = http_->start(); !s) return s;
    if (auto s = ensure_private_dir(runtime_dir_); !s) return fail("runtime directory: ", s.message());
    const std::string ppath = runtime_dir_ + "/hearth.http-port";
    if (auto s = write_small_file(ppath, std::to_string(http_->port()) + "\n"); !s) return s;
    files_to_remove_.push_back(ppath);
    return {};
}

status daemon_server::start_tcp() {
    if (auto s = ensure_token(); !s) return s;
    const std::string tpath = token_path(runtime_dir_);
    try {
        const auto addr = cfg_.listen_any ? asio::ip::address(asio::ip::address_v4::any())
                                          : asio::ip::address(asio::ip::address_v4::loopback());
        tcp_acceptor_.emplace(io_);
        const asio::ip::tcp::endpoint ep(addr, static_cast<uint16_t>(cfg_.tcp_port));
        tcp_acceptor_->open(ep.protocol());
        tcp_acceptor_->set_option(asio::ip::tcp::acceptor::reuse_address(true));
        tcp_acceptor_->bind(ep);
        tcp_acceptor_->listen();
        tcp_port_ = tcp_acceptor_->local_endpoint().port();
        if (cfg_.listen_any) spdlog::warn("TCP listens on ALL interfaces (--listen-any); only the token protects it");
        spdlog::info("listening on tcp {}:{} (token in {})", addr.to_string(), tcp_port_, tpath);
    } catch (const boost::system::system_error & e) {
        return fail("tcp port ", cfg_.tcp_port, ": ", e.what());
    }
    const std::string ppath = runtime_dir_ + "/hearth.port";
    if (auto s = write_small_file(ppath, std::to_string(tcp_port_) + "\n"); !s) return s;
    files_to_remove_.push_back(ppath);
    accept_tcp();
    return {};
}

status daemon_server::start_stdio() {
    auto stream = make_stdio_stream(io_);
    if (!stream) return stream.error();
    add_session(std::move(*stream), false, true);
    return {};
}

// After an accept error other than a closed acceptor (out of file descriptors, say), the
// next accept waits a little: retrying at once would spin on the same error.
void daemon_server::accept_again_later(asio::steady_timer & backoff, void (daemon_server::*accept)()) {
    backoff.expires_after(std::chrono::milliseconds(100));
    backoff.async_wait([this, accept](boost::system::error_code ec) {
        if (!ec) (this->*accept)();
    });
}

void daemon_server::accept_unix() {
    unix_acceptor_->async_accept([this](boost::system::error_code ec, local::socket s) {
        if (ec == asio::error::operation_aborted || !unix_acceptor_->is_open()) return;
        if (ec) {
            spdlog::warn("unix accept: {}", ec.message());
            accept_again_later(unix_backoff_, &daemon_server::accept_unix);
            return;
        }
        std::string why;
        if (!peer_is_this_user(s, why)) spdlog::warn("unix socket: refused a connection: {}", why);
        else add_session(make_unix_stream(std::move(s)), false, false);
        accept_unix();
    });
}

void daemon_server::accept_tcp() {
    tcp_acceptor_->async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket s) {
        if (ec == asio::error::operation_aborted || !tcp_acceptor_->is_open()) return;
        if (ec) {
            spdlog::warn("tcp accept: {}", ec.message());
            accept_again_later(tcp_backoff_, &daemon_server::accept_tcp);
            return;
        }
        add_session(make_tcp_stream(std::move(s)), true, false);
        accept_tcp();
    });
}

void daemon_server::add_session(std::unique_ptr<byte_stream> stream, bool needs_auth, bool is_stdio) {
    std::shared_ptr<session> s, dropped;
    {
        std::lock_guard lock(mu_);
        if (stopping_) {
            stream->close();
            return;
        }
        if (needs_auth && unauthenticated_.size() >= cfg_.limits.max_unauthenticated) {
            // The oldest waiting one goes: a client with the token authenticates within
            // milliseconds of connecting, so it is never the oldest for long.
            const auto oldest = sessions_.find(*unauthenticated_.begin());
            dropped = std::move(oldest->second);
            sessions_.erase(oldest);
            unauthenticated_.erase(unauthenticated_.begin());
        } else if (!needs_auth && n_authenticated() >= cfg_.limits.max_connections) {
            const std::string why = std::to_string(n_authenticated()) + " connections are already open (limits.max-connections)";
            spdlog::warn("refusing {}: {}", stream->describe(), why);
            stream->write_now(refusal_message(why));
            stream->close();
            return;
        }
        s = std::make_shared<session>(
            io_, std::move(stream), make_session_options(needs_auth),
            [this](session & ss) { return services_->make_handlers(ss.id()); },
            [this](session & ss, int code) { on_session_closed(ss, code); });
        sessions_[s->id()] = s;
        if (needs_auth) unauthenticated_.insert(s->id());
        if (is_stdio) stdio_session_ = s->id();
        services_->set_connections(n_authenticated());
    }
    if (dropped) {
        spdlog::warn("session {}: dropped: {} connections are waiting to authenticate (limits.max-unauthenticated)", dropped->id(),
                     cfg_.limits.max_unauthenticated);
        dropped->close("dropped for a newer connection waiting to authenticate", false);
    }
    s->start();
}

std::optional<std::string> daemon_server::admit_authenticated(session & s) {
    std::lock_guard lock(mu_);
    if (unauthenticated_.erase(s.id()) == 0) return "dropped while authenticating (limits.max-unauthenticated)";
    if (n_authenticated() > cfg_.limits.max_connections) {
        sessions_.erase(s.id());   // it is closing; it must not count meanwhile
        return std::to_string(n_authenticated()) + " connections are already open (limits.max-connections)";
    }
    services_->set_connections(n_authenticated());
    return std::nullopt;
}

void daemon_server::on_session_closed(session & s, int exit_code) {
    services_->connection_closed(s.id());
    bool was_stdio = false, last = false;
    std::shared_ptr<session> keep;   // the session is being closed from its own strand: free it after
    {
        std::lock_guard lock(mu_);
        auto it = sessions_.find(s.id());
        if (it != sessions_.end()) {
            keep = std::move(it->second);
            sessions_.erase(it);
        }
        unauthenticated_.erase(s.id());
        was_stdio = s.id() == stdio_session_;
        last = sessions_.empty();
        services_->set_connections(n_authenticated());
    }
    if (was_stdio) {
        exit_code_ = exit_code;
        spdlog::info("stdio client gone (exit code {}): shutting down", exit_code);
        request_stop();
    }
    if (last) asio::post(ctl_, [this] {
        std::lock_guard lock(mu_);
        if (stopping_ && sessions_.empty()) shutdown_deadline_.cancel();
    });
    asio::post(io_, [keep = std::move(keep)] {});
}

void daemon_server::request_stop() {
    asio::post(ctl_, [this] { begin_shutdown(); });
}

void daemon_server::begin_shutdown() {
    std::vector<std::shared_ptr<session>> open;
    {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        stopping_ = true;
        for (auto & [id, s] : sessions_) open.push_back(s);
    }
    boost::system::error_code ec;
    if (unix_acceptor_) unix_acceptor_->close(ec);
    if (tcp_acceptor_) tcp_acceptor_->close(ec);
    if (http_) http_->stop();
    signals_.cancel(ec);
    for (const auto & f : files_to_remove_) ::unlink(f.c_str());
    files_to_remove_.clear();
    // Queued jobs are answered now; the running one stops at its next token. This blocks
    // this I/O thread for at most one token's time; the worker only posts, never waits on I/O.
    sched_->stop();
    // The deadline is armed before the sessions are told to close, and cancelled (on this
    // strand) once the last one has gone, so it cannot miss a session that closes quickly.
    shutdown_deadline_.expires_after(std::chrono::milliseconds(cfg_.limits.partial_message_timeout_ms) + std::chrono::seconds(1));
    shutdown_deadline_.async_wait([this](boost::system::error_code e) {
        if (e) return;
        spdlog::warn("shutdown: connections still open after the deadline; stopping anyway");
        io_.stop();
    });
    for (auto & s : open) s->close("daemon shutting down", true);
    std::lock_guard lock(mu_);
    if (sessions_.empty()) shutdown_deadline_.cancel();
}

int daemon_server::run() {
    if (!started_) return 1;
    const int n = std::max(1, cfg_.io_threads);
    std::vector<std::thread> threads;
    for (int i = 1; i < n; ++i) threads.emplace_back([this] { io_.run(); });
    io_.run();
    for (auto & t : threads) t.join();
    sched_->stop();
    if (model_)
        if (auto s = model_->persist(); !s) spdlog::warn("saving the KV slots: {}", s.message());
    spdlog::info("daemon stopped");
    return exit_code_.load();
}

}  // namespace hearth::daemon
