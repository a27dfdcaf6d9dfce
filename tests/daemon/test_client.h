// test_client: a raw JSON-RPC client for the daemon's integration tests: blocking POSIX
// sockets (Unix or loopback TCP) or a pipe pair, Content-Length framing by hand, and reads
// with a deadline so a test that waits for a reply that never comes fails instead of hanging.
#pragma once

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

namespace hearth::daemon::testing {

class test_client {
public:
    static std::optional<test_client> connect_unix(const std::string & path) {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
        if (::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
            ::close(fd);
            return std::nullopt;
        }
        return test_client(fd, fd);
    }
    static std::optional<test_client> connect_tcp(uint16_t port) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
            ::close(fd);
            return std::nullopt;
        }
        return test_client(fd, fd);
    }
    test_client(int rfd, int wfd) : rfd_(rfd), wfd_(wfd) {}
    test_client(test_client && o) noexcept : rfd_(o.rfd_), wfd_(o.wfd_), buf_(std::move(o.buf_)) { o.rfd_ = o.wfd_ = -1; }
    ~test_client() { close(); }

    void close() {
        if (rfd_ >= 0) ::close(rfd_);
        if (wfd_ >= 0 && wfd_ != rfd_) ::close(wfd_);
        rfd_ = wfd_ = -1;
    }

    // Closes the write end alone (a pipe pair: the child sees the end of its input).
    void close_write() {
        if (wfd_ >= 0 && wfd_ != rfd_) ::close(wfd_);
        wfd_ = -1;
    }

    bool send_raw(std::string_view bytes) {
        while (!bytes.empty()) {
            // write(), not send(): the write end may be a pipe (a child's stdin). SIGPIPE is
            // ignored by the tests that use pipes.
            const ssize_t n = ::write(wfd_, bytes.data(), bytes.size());
            if (n <= 0) return false;
            bytes.remove_prefix(static_cast<size_t>(n));
        }
        return true;
    }
    bool send(const boost::json::value & msg) {
        const std::string body = boost::json::serialize(msg);
        return send_raw("Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    }
    bool request(int64_t id, std::string_view method, boost::json::value params = boost::json::object{}) {
        boost::json::object m{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
        if (!params.is_null()) m["params"] = std::move(params);   // null: no params member at all
        return send(m);
    }
    bool notify(std::string_view method, boost::json::value params = boost::json::object{}) {
        boost::json::object m{{"jsonrpc", "2.0"}, {"method", method}};
        if (!params.is_null()) m["params"] = std::move(params);
        return send(m);
    }

    // The next message, or nullopt on timeout / connection closed (closed() tells which).
    std::optional<boost::json::value> next(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            if (auto m = take_message()) return m;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0 || closed_) return std::nullopt;
            pollfd p{rfd_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
            char tmp[65536];
            const ssize_t n = ::read(rfd_, tmp, sizeof tmp);
            if (n <= 0) {
                closed_ = true;
                continue;
            }
            buf_.append(tmp, static_cast<size_t>(n));
        }
    }
    // Skips messages (notifications, other replies) until the reply to `id`; they are kept in
    // `skipped` for the caller.
    std::optional<boost::json::value> reply_to(int64_t id, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
        auto is_reply = [id](const boost::json::value & m) {
            if (!m.is_object() || !m.as_object().contains("id") || m.as_object().contains("method")) return false;
            const auto & v = m.as_object().at("id");
            return v.is_int64() && v.as_int64() == id;
        };
        for (auto it = skipped.begin(); it != skipped.end(); ++it) {
            if (is_reply(*it)) {
                auto m = std::move(*it);
                skipped.erase(it);
                return m;
            }
        }
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return std::nullopt;
            auto m = next(left);
            if (!m) return std::nullopt;
            if (is_reply(*m)) return m;
            skipped.push_back(std::move(*m));
        }
    }
    // True once the daemon closed the connection (waits up to `timeout` for it).
    bool wait_closed(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
        while (next(timeout)) {}
        return closed_;
    }
    bool closed() const { return closed_; }

    std::vector<boost::json::value> skipped;

private:
    std::optional<boost::json::value> take_message() {
        const size_t he = buf_.find("\r\n\r\n");
        if (he == std::string::npos) return std::nullopt;
        const size_t cl = buf_.find("Content-Length: ");
        if (cl == std::string::npos || cl > he) return std::nullopt;
        const size_t len = std::stoul(buf_.substr(cl + 16, he - cl - 16));
        if (buf_.size() < he + 4 + len) return std::nullopt;
        auto v = boost::json::parse(buf_.substr(he + 4, len));
        buf_.erase(0, he + 4 + len);
        return v;
    }

    int rfd_ = -1, wfd_ = -1;
    std::string buf_;
    bool closed_ = false;
};

// Connects to a daemon that is starting: retries every 10 ms until `within` has passed.
inline std::optional<test_client> connect_unix_when_up(const std::string & path, std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    for (;;) {
        if (auto t = test_client::connect_unix(path)) return t;
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// The `result` of the reply to `id`; the test stops if none comes within `timeout` or it is an error.
inline boost::json::value ok_result(test_client & c, int64_t id,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    auto r = c.reply_to(id, timeout);
    REQUIRE(r);
    INFO(boost::json::serialize(*r));
    REQUIRE(r->as_object().contains("result"));
    return r->at("result");
}

}  // namespace hearth::daemon::testing
