// daemon_server: the running daemon. It owns the I/O threads (an Asio io_context), the
// listeners (Unix socket, loopback TCP, stdio), the sessions, the scheduler with its one
// compute worker, the model service, and the signal handling.
//
// Start-up (start()): the runtime directory is made private; the Unix socket is bound with
// mode 0600 (a stale socket file left by a dead daemon is replaced; a live daemon on it is
// an error) while holding <socket>.lock for the daemon's whole life; the TCP listener is
// bound to loopback (unless listen_any) with a fresh token in <runtime dir>/hearth.token
// and the bound port in <runtime dir>/hearth.port.
// Admission: limits.max-connections counts authenticated connections (Unix, stdio, and TCP
// past hearth/auth); TCP connections that have not authenticated yet are any local user's to
// open, so they have their own pool of limits.max-unauthenticated (a new one drops the oldest)
// and must authenticate within limits.auth-timeout-ms. They can never take an editor's place.
// A connection refused for the limit is told why (window/showMessage) before it is closed.
// Shutdown (request_stop(), SIGINT, SIGTERM, or the stdio client leaving): listeners close
// and their files are removed, queued jobs are answered "cancelled", the running one stops
// at its next token, sessions flush their replies and close; run() then returns.
// Thread-safety: start() then run() from one thread; request_stop() from any thread.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "daemon/http/http_api.h"
#include "daemon/http/http_server.h"
#include "daemon/settings/config.h"
#include "daemon/engine/model_service.h"
#include "daemon/settings/runtime_dir.h"
#include "daemon/services/scheduler.h"
#include "daemon/services/services.h"
#include "daemon/server/session.h"

namespace hearth::daemon {

class daemon_server {
public:
    // `model` may be null: the daemon then serves the protocol and answers model requests
    // with a clear "no model loaded" error.
    daemon_server(daemon_config cfg, std::unique_ptr<model_service> model);
    ~daemon_server();
    daemon_server(const daemon_server &) = delete;
    daemon_server & operator=(const daemon_server &) = delete;

    status start();
    int run();              // blocks until stopped; the exit code (stdio: the LSP exit code)
    void request_stop();

    uint16_t tcp_port() const { return tcp_port_; }
    uint16_t http_port() const { return http_ ? http_->port() : 0; }
    const std::string & socket_path() const { return socket_path_; }
    const std::string & runtime_dir() const { return runtime_dir_; }
    services & svc() { return *services_; }

private:
    status start_unix();
    status start_tcp();
    status start_stdio();
    status start_http();
    status ensure_token();   // the TCP and HTTP transports' token, made and written once
    void accept_unix();
    void accept_tcp();
    void add_session(std::unique_ptr<byte_stream> stream, bool needs_auth, bool is_stdio);
    std::optional<std::string> admit_authenticated(session & s);
    size_t n_authenticated() const { return sessions_.size() - unauthenticated_.size(); }   // under mu_
    void accept_again_later(boost::asio::steady_timer & backoff, void (daemon_server::*accept)());
    void on_session_closed(session & s, int exit_code);
    void begin_shutdown();
    session_options make_session_options(bool needs_auth);

    daemon_config cfg_;
    std::unique_ptr<model_service> model_;
    boost::asio::io_context io_;
    // Shutdown steps and the deadline timer run on this strand (timers are not thread-safe
    // and the io_context has several threads).
    boost::asio::strand<boost::asio::io_context::executor_type> ctl_;
    std::shared_ptr<scheduler> sched_;
    std::unique_ptr<services> services_;
    std::unique_ptr<http_api> http_api_;
    std::unique_ptr<http_server> http_;
    boost::asio::signal_set signals_;
    boost::asio::steady_timer shutdown_deadline_;
    std::optional<boost::asio::local::stream_protocol::acceptor> unix_acceptor_;
    std::optional<boost::asio::ip::tcp::acceptor> tcp_acceptor_;
    boost::asio::steady_timer unix_backoff_, tcp_backoff_;   // after an accept error (EMFILE), before the next
    std::optional<file_lock> socket_lock_;
    std::string runtime_dir_;
    std::string socket_path_;
    std::string token_;
    uint16_t tcp_port_ = 0;
    std::vector<std::string> files_to_remove_;

    std::mutex mu_;
    std::map<uint64_t, std::shared_ptr<session>> sessions_;
    std::set<uint64_t> unauthenticated_;   // TCP sessions before hearth/auth, all in sessions_; ids grow: begin() is the oldest
    uint64_t stdio_session_ = 0;
    std::atomic<int> exit_code_{0};
    bool stopping_ = false;   // io thread only
    std::atomic<bool> started_{false};
};

}  // namespace hearth::daemon
