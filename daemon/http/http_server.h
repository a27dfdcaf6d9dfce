// http_server: the HTTP transport (Boost.Beast) in front of http_api. Listens on 127.0.0.1 and
// ::1 only (never on another interface, whatever listen-any says), one request at a time per
// connection (keep-alive), answers with a Content-Length body or a chunked Server-Sent
// Events stream.
// A request's header is read first and checked (http_request_parser.h) before its body is read:
// a refusal is answered at once and the connection closed, `Expect: 100-continue` is answered
// only for a header that passes.
// Limits, as the LSP transports have them: a header of at most max_header_bytes (431), a body
// of at most max_body_bytes (413), a request that must arrive within request_timeout (the
// first one on a connection within auth_timeout), at most max_connections connections that
// have sent a good token and max_unauthenticated that have not (a new one drops the oldest),
// and unread output of at most max_write_buffer_bytes. A client that hangs up has its job
// cancelled.
// Thread-safety: start() and stop() from the daemon's control thread; connections run on
// their own strands of the daemon's io_context; replies may come from the compute worker.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/result.h"
#include "daemon/http/http_api.h"
#include "daemon/http/http_guard.h"

namespace hearth::daemon {

struct http_server_options {
    uint16_t port = 0;                  // 0: any free port
    token_check token_ok;               // empty: no token (the explicit opt-out)
    size_t max_header_bytes = 16 << 10;
    size_t max_body_bytes = 4u << 20;
    size_t max_connections = 32;
    size_t max_unauthenticated = 8;
    size_t max_write_buffer_bytes = 64u << 20;
    std::chrono::milliseconds request_timeout{10000};
    std::chrono::milliseconds auth_timeout{2000};
};

class http_connection;

class http_server {
public:
    http_server(boost::asio::io_context & io, http_api & api, http_server_options opts);
    ~http_server();

    status start();
    uint16_t port() const { return port_; }
    void stop();   // closes the listeners and every connection

private:
    friend class http_connection;
    void accept(boost::asio::ip::tcp::acceptor & a);
    // The connection sent a good token; false: the authenticated pool is full.
    bool admit(uint64_t id);
    void closed(uint64_t id);

    boost::asio::io_context & io_;
    http_api & api_;
    http_server_options opts_;
    std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> acceptors_;
    boost::asio::steady_timer backoff_;
    uint16_t port_ = 0;
    std::mutex mu_;
    bool stopping_ = false;
    uint64_t next_id_ = uint64_t{1} << 62;   // apart from the LSP sessions' ids (scheduler owners)
    std::map<uint64_t, std::weak_ptr<http_connection>> connections_;
    std::set<uint64_t> unauthenticated_;     // ids grow: begin() is the oldest
};

}  // namespace hearth::daemon
