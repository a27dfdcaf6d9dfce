// session: one client connection of the daemon, on any transport. It reads bytes from its
// byte_stream, feeds them to an lsp::connection (framing + protocol state + handlers) and
// writes what the protocol sends back. A TCP session first passes the auth_gate.
// Limits enforced here: a partial message (or the TCP auth message) must complete within
// partial_message_timeout (a slow or stalled sender is disconnected, it cannot hold a
// connection slot open by trickling bytes); output the client does not read is bounded by
// max_write_buffer_bytes. The protocol layer enforces the frame size, open documents and
// requests in flight.
// When the session ends for any reason (client gone, `exit`, fatal framing error, daemon
// shutdown) it cancels all its work in the scheduler, then calls on_closed once.
// Thread-safety: all state lives on the session's strand. start() once; close() and
// write() may be called from any thread (they post to the strand).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "daemon/server/auth.h"
#include "daemon/server/byte_stream.h"
#include "lsp/connection.h"

namespace hearth::daemon {

class session;

struct session_options {
    std::chrono::milliseconds partial_message_timeout{10000};
    size_t max_write_buffer_bytes = 64u << 20;
    std::optional<std::string> auth_token;   // set: the first message must be hearth/auth
    std::chrono::milliseconds auth_timeout{2000};
    // Called on the strand once the token checked out: nullopt admits the session, a reason
    // refuses it (the client is shown the reason, then the connection closes).
    std::function<std::optional<std::string>(session &)> admit_after_auth;
    lsp::server_limits server_limits;
    lsp::framing_limits framing_limits;
};

// The last message to a client the daemon will not serve: a window/showMessage (type Error)
// saying why, framed. Editors show it; `hearth status` prints it.
std::string refusal_message(std::string_view why);

class session : public std::enable_shared_from_this<session> {
public:
    using strand_type = boost::asio::strand<boost::asio::io_context::executor_type>;
    // Builds the protocol handlers for this session (the daemon's services bound to it).
    using handlers_factory = std::function<lsp::handlers(session &)>;
    // Called once on the strand when the session has ended; exit_code is the LSP one.
    using closed_fn = std::function<void(session &, int exit_code)>;

    session(boost::asio::io_context & io, std::unique_ptr<byte_stream> stream, session_options opts,
            handlers_factory make_handlers, closed_fn on_closed);
    ~session();

    void start();
    // Ends the session: with `graceful`, queued output is flushed first (bounded by the
    // partial-message timeout), else the stream is closed at once.
    void close(std::string reason, bool graceful);

    uint64_t id() const { return id_; }
    const std::string & peer() const { return peer_; }
    strand_type & strand() { return strand_; }

private:
    void do_read();
    void on_read(boost::system::error_code ec, size_t n);
    void feed_protocol(std::string_view bytes);
    void write_framed(std::string bytes);    // on the strand
    void do_write();
    void arm_deadline(std::chrono::milliseconds after, const char * what);
    void start_protocol();
    void finish();

    boost::asio::io_context & io_;
    strand_type strand_;
    std::unique_ptr<byte_stream> stream_;
    session_options opts_;
    handlers_factory make_handlers_;
    closed_fn on_closed_;
    uint64_t id_;
    std::string peer_;

    std::optional<auth_gate> gate_;
    std::unique_ptr<lsp::connection> conn_;
    std::array<char, 64 * 1024> read_buf_{};
    std::deque<std::string> out_;
    size_t out_bytes_ = 0;
    bool writing_ = false;
    bool closing_ = false;     // no more input is processed
    bool finished_ = false;
    bool deadline_armed_ = false;
    boost::asio::steady_timer deadline_;
    boost::asio::steady_timer flush_timer_;
    int exit_code_ = 1;
};

}  // namespace hearth::daemon
