#include "daemon/http/http_server.h"

#include <cerrno>
#include <deque>
#include <sstream>

#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "daemon/http/http_request_parser.h"

#ifndef HEARTH_VERSION
#define HEARTH_VERSION "0.1.0"
#endif

namespace hearth::daemon {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

std::string serialize(http::response<http::string_body> & r) {
    r.set(http::field::server, "hearth/" HEARTH_VERSION);
    r.set(http::field::cache_control, "no-store");
    r.prepare_payload();
    std::ostringstream os;
    os << r;
    return os.str();
}

}  // namespace

// One accepted socket: reads a request, hands it to the API, writes its answer (whole or as
// events), then reads the next one. Everything but the replies' entry points runs on its strand.
class http_connection : public std::enable_shared_from_this<http_connection> {
public:
    http_connection(http_server & server, tcp::socket s, uint64_t id)
        : server_(server), stream_(std::move(s)), id_(id) {}

    uint64_t id() const { return id_; }
    void start() { asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); }); }
    void close_from_server() { asio::post(stream_.get_executor(), [self = shared_from_this()] { self->close(); }); }

    // Called from the API (any thread): the bytes go through the strand.
    void send(std::string bytes, bool last) {
        asio::post(stream_.get_executor(), [self = shared_from_this(), bytes = std::move(bytes), last]() mutable {
            self->enqueue(std::move(bytes), last);
        });
    }
    bool gone() const { return closed_.load(); }
    bool keep_alive() const { return keep_alive_; }

private:
    // Header first: the body is read only for a header that passes (check_header).
    void read() {
        if (closed_) return;
        busy_ = false;
        parser_.emplace();
        configure_request_parser(*parser_, server_.opts_.max_header_bytes);
        stream_.expires_after(authenticated_ ? server_.opts_.request_timeout : server_.opts_.auth_timeout);
        http::async_read_header(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
    }

    void on_header(beast::error_code ec) {
        if (ec) return read_failed(ec);
        const header_verdict v = check_header(*parser_, server_.opts_.token_ok, server_.opts_.max_body_bytes);
        if (v.refusal) return refuse(v.refusal->status, v.refusal->message, v.refusal->status == 401);
        if (!authenticated_) {
            if (!server_.admit(id_)) return refuse(503, "too many HTTP connections are open (limits.max-connections)");
            authenticated_ = true;
        }
        if (!v.send_continue) return read_body();
        static constexpr std::string_view k_continue = "HTTP/1.1 100 Continue\r\n\r\n";
        asio::async_write(stream_, asio::buffer(k_continue), [self = shared_from_this()](beast::error_code e, size_t) {
            if (e) return self->close();
            self->read_body();
        });
    }

    void read_body() {
        http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
    }

    void read_failed(beast::error_code ec) {
        if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::operation_aborted) return close();
        if (ec == beast::error::timeout) {   // the stream has closed the socket: nothing more can be said
            spdlog::info("http connection {}: closed: no request within {} ms", id_,
                         (authenticated_ ? server_.opts_.request_timeout : server_.opts_.auth_timeout).count());
            return close();
        }
        const auto [status, why] = parse_error_status(ec);
        refuse(status, why);
    }

    void on_read(beast::error_code ec) {
        if (ec) return read_failed(ec);
        http::request<http::string_body> req = parser_->release();
        keep_alive_ = req.keep_alive();
        stream_.expires_never();   // the job has its own budgets; a hang-up cancels it
        busy_ = true;
        http_request r;
        r.method = std::string(req.method_string());
        r.path = std::string(target_path(req.target()));
        r.body = std::move(req.body());
        r.owner = id_;
        watch_for_hangup();
        server_.api_.handle(r, make_reply());
    }

    std::shared_ptr<http_reply> make_reply();

    // While the answer is computed nothing is read; a readable socket with nothing to peek
    // means the client hung up, and its job is cancelled.
    void watch_for_hangup() {
        stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
            if (ec || !self->busy_ || self->closed_) return;
            char c;
            const ssize_t n = ::recv(self->stream_.socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
                spdlog::debug("http connection {}: the client hung up; its job stops", self->id_);
                self->close();
            }
            // Bytes of a pipelined next request wait for this answer.
        });
    }

    void refuse(unsigned status, const std::string & why, bool auth_challenge = false) {
        spdlog::info("http connection {}: refused ({}): {}", id_, status, why);
        const http_response e = error_response(status, why);
        http::response<http::string_body> r{static_cast<http::status>(status), 11};
        r.set(http::field::content_type, e.content_type);
        if (auth_challenge) r.set(http::field::www_authenticate, "Bearer");
        r.keep_alive(false);
        r.body() = e.body;
        enqueue(serialize(r), true, /*then_close=*/true);
    }

    void enqueue(std::string bytes, bool last, bool then_close = false) {
        if (closed_) return;
        queued_bytes_ += bytes.size();
        if (queued_bytes_ > server_.opts_.max_write_buffer_bytes) {
            spdlog::warn("http connection {}: the client reads too slowly; closing it", id_);
            return close();
        }
        out_.push_back({std::move(bytes), last, then_close || (last && !keep_alive_)});
        if (!writing_) write_next();
    }

    void write_next() {
        if (out_.empty() || closed_) return;
        writing_ = true;
        asio::async_write(stream_, asio::buffer(out_.front().bytes), [self = shared_from_this()](beast::error_code ec, size_t) {
            self->writing_ = false;
            if (ec) return self->close();
            piece p = std::move(self->out_.front());
            self->out_.pop_front();
            self->queued_bytes_ -= p.bytes.size();
            if (p.last) {
                if (p.then_close) return self->linger();
                return self->read();
            }
            self->write_next();
        });
    }

    // After a refusal the client may still be sending a body nobody asked for; closing a socket
    // with unread bytes resets the connection, and a reset can destroy the refusal before the
    // client has read it. So the sending side is shut (the client sees the answer end) and what
    // still arrives is thrown away unparsed, until the client closes or auth-timeout-ms passes.
    void linger() {
        beast::error_code ec;
        stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
        if (ec) return close();
        buffer_.clear();
        stream_.expires_after(server_.opts_.auth_timeout);
        discard();
    }

    void discard() {
        stream_.async_read_some(buffer_.prepare(16 << 10), [self = shared_from_this()](beast::error_code ec, size_t) {
            if (ec) return self->close();
            self->discard();
        });
    }

    void close() {
        if (closed_.exchange(true)) return;
        beast::error_code ec;
        stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
        stream_.close();
        server_.api_.connection_closed(id_);
        server_.closed(id_);
    }

    struct piece {
        std::string bytes;
        bool last = false;        // the end of an answer
        bool then_close = false;
    };

    http_server & server_;
    beast::tcp_stream stream_;
    const uint64_t id_;
    beast::flat_buffer buffer_;
    std::optional<request_parser> parser_;
    std::deque<piece> out_;
    size_t queued_bytes_ = 0;
    bool writing_ = false;
    bool busy_ = false;
    bool authenticated_ = false;
    bool keep_alive_ = true;
    std::atomic<bool> closed_{false};
};

namespace {

// The answer to one request: a whole response, or the events of a stream (chunked encoding).
class connection_reply final : public http_reply {
public:
    explicit connection_reply(std::shared_ptr<http_connection> c) : c_(std::move(c)) {}

    void respond(http_response r) override {
        if (done_.exchange(true)) return;
        http::response<http::string_body> res{static_cast<http::status>(r.status), 11};
        res.set(http::field::content_type, r.content_type);
        res.keep_alive(c_->keep_alive());
        res.body() = std::move(r.body);
        c_->send(serialize(res), true);
    }
    void begin_events() override {
        if (done_.exchange(true)) return;
        streaming_ = true;
        http::response<http::empty_body> res{http::status::ok, 11};
        res.set(http::field::content_type, "text/event-stream");
        res.set(http::field::cache_control, "no-store");
        res.set(http::field::server, "hearth/" HEARTH_VERSION);
        res.keep_alive(c_->keep_alive());
        res.chunked(true);
        std::ostringstream os;
        os << res.base();
        c_->send(os.str(), false);
    }
    bool event(std::string data) override {
        if (!streaming_ || c_->gone()) return false;
        const std::string payload = "data: " + data + "\n\n";
        c_->send(fmt::format("{:x}\r\n{}\r\n", payload.size(), payload), false);
        return true;
    }
    void end_events() override {
        if (!streaming_ || ended_.exchange(true)) return;
        c_->send("0\r\n\r\n", true);
    }

private:
    std::shared_ptr<http_connection> c_;
    std::atomic<bool> done_{false}, ended_{false};
    bool streaming_ = false;   // set before any event, on the thread that streams
};

}  // namespace

std::shared_ptr<http_reply> http_connection::make_reply() { return std::make_shared<connection_reply>(shared_from_this()); }

http_server::http_server(asio::io_context & io, http_api & api, http_server_options opts)
    : io_(io), api_(api), opts_(std::move(opts)), backoff_(io) {}

http_server::~http_server() = default;

status http_server::start() {
    // 127.0.0.1 first (its port, when any free one was asked for, is ::1's too); ::1 only where
    // the machine has IPv6.
    const asio::ip::address addrs[] = {asio::ip::address_v4::loopback(), asio::ip::address_v6::loopback()};
    for (const auto & addr : addrs) {
        const bool v6 = addr.is_v6();
        auto a = std::make_unique<tcp::acceptor>(io_);
        boost::system::error_code ec;
        const tcp::endpoint ep(addr, port_ ? port_ : opts_.port);
        a->open(ep.protocol(), ec);
        if (!ec) a->set_option(tcp::acceptor::reuse_address(true), ec);
        if (!ec && v6) a->set_option(asio::ip::v6_only(true), ec);
        if (!ec) a->bind(ep, ec);
        if (!ec) a->listen(asio::socket_base::max_listen_connections, ec);
        if (ec) {
            if (v6) {
                spdlog::info("http: not listening on [::1]: {}", ec.message());
                continue;
            }
            return fail("http port ", opts_.port, " on 127.0.0.1: ", ec.message());
        }
        port_ = a->local_endpoint().port();
        acceptors_.push_back(std::move(a));
    }
    for (auto & a : acceptors_) accept(*a);
    spdlog::info("HTTP API on http://127.0.0.1:{}/{}", port_, opts_.token_ok ? " (bearer token required)" : " WITHOUT a token (http-no-token)");
    return {};
}

void http_server::accept(tcp::acceptor & a) {
    a.async_accept(asio::make_strand(io_), [this, &a](boost::system::error_code ec, tcp::socket s) {
        if (ec == asio::error::operation_aborted || !a.is_open()) return;
        if (ec) {
            spdlog::warn("http accept: {}", ec.message());
            backoff_.expires_after(std::chrono::milliseconds(100));
            backoff_.async_wait([this, &a](boost::system::error_code e) {
                if (!e) accept(a);
            });
            return;
        }
        std::shared_ptr<http_connection> c, dropped;
        {
            std::lock_guard lock(mu_);
            if (stopping_) return;
            if (unauthenticated_.size() >= opts_.max_unauthenticated) {
                // The oldest waiting one goes: a client with the token sends it at once.
                const uint64_t oldest = *unauthenticated_.begin();
                unauthenticated_.erase(unauthenticated_.begin());
                dropped = connections_[oldest].lock();
                connections_.erase(oldest);
            }
            c = std::make_shared<http_connection>(*this, std::move(s), next_id_++);
            connections_[c->id()] = c;
            unauthenticated_.insert(c->id());
        }
        if (dropped) {
            spdlog::warn("http connection {}: dropped: {} connections are waiting to send a token (limits.max-unauthenticated)",
                         dropped->id(), opts_.max_unauthenticated);
            dropped->close_from_server();
        }
        c->start();
        accept(a);
    });
}

bool http_server::admit(uint64_t id) {
    std::lock_guard lock(mu_);
    if (unauthenticated_.erase(id) == 0 && !connections_.contains(id)) return false;   // dropped meanwhile
    return connections_.size() - unauthenticated_.size() <= opts_.max_connections;
}

void http_server::closed(uint64_t id) {
    std::lock_guard lock(mu_);
    connections_.erase(id);
    unauthenticated_.erase(id);
}

void http_server::stop() {
    std::vector<std::shared_ptr<http_connection>> open;
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
        for (auto & [id, w] : connections_)
            if (auto c = w.lock()) open.push_back(std::move(c));
    }
    boost::system::error_code ec;
    for (auto & a : acceptors_) a->close(ec);
    backoff_.cancel();
    for (auto & c : open) c->close_from_server();
}

}  // namespace hearth::daemon
