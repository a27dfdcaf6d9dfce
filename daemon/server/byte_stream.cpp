#include "daemon/server/byte_stream.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/write.hpp>

namespace hearth::daemon {

namespace asio = boost::asio;

namespace {

template <class Socket>
class socket_stream final : public byte_stream {
public:
    socket_stream(Socket s, std::string what) : s_(std::move(s)), what_(std::move(what)) {}
    void async_read_some(asio::mutable_buffer buf, io_handler h) override { s_.async_read_some(buf, std::move(h)); }
    void async_write_all(asio::const_buffer buf, io_handler h) override { asio::async_write(s_, buf, std::move(h)); }
    void close() override {
        boost::system::error_code ec;
        s_.shutdown(Socket::shutdown_both, ec);
        s_.close(ec);
    }
    std::string describe() const override { return what_; }
    void write_now(std::string_view bytes) override {
        (void)::send(s_.native_handle(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }

private:
    Socket s_;
    std::string what_;
};

class stdio_stream final : public byte_stream {
public:
    stdio_stream(asio::io_context & io, int in, int out) : in_(io, in), out_(io, out) {}
    void async_read_some(asio::mutable_buffer buf, io_handler h) override { in_.async_read_some(buf, std::move(h)); }
    void async_write_all(asio::const_buffer buf, io_handler h) override { asio::async_write(out_, buf, std::move(h)); }
    void close() override {
        boost::system::error_code ec;
        in_.close(ec);
        out_.close(ec);
    }
    std::string describe() const override { return "stdio"; }

private:
    asio::posix::stream_descriptor in_;
    asio::posix::stream_descriptor out_;
};

}  // namespace

std::unique_ptr<byte_stream> make_tcp_stream(asio::ip::tcp::socket s) {
    boost::system::error_code ec;
    const auto ep = s.remote_endpoint(ec);
    std::string what = ec ? "tcp" : "tcp " + ep.address().to_string() + ":" + std::to_string(ep.port());
    s.set_option(asio::ip::tcp::no_delay(true), ec);   // small JSON replies: don't wait for Nagle
    return std::make_unique<socket_stream<asio::ip::tcp::socket>>(std::move(s), std::move(what));
}

std::unique_ptr<byte_stream> make_unix_stream(asio::local::stream_protocol::socket s) {
    return std::make_unique<socket_stream<asio::local::stream_protocol::socket>>(std::move(s), "unix");
}

result<std::unique_ptr<byte_stream>> make_stdio_stream(asio::io_context & io) {
    const int in = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
    const int out = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (in < 0 || out < 0) return fail("stdio: cannot duplicate stdin/stdout: ", std::strerror(errno));
    if (::dup2(2, 1) < 0) return fail("stdio: cannot point stdout at stderr: ", std::strerror(errno));
    try {
        return std::unique_ptr<byte_stream>(std::make_unique<stdio_stream>(io, in, out));
    } catch (const boost::system::system_error & e) {
        ::close(in);
        ::close(out);
        return fail("stdio: ", e.what());
    }
}

}  // namespace hearth::daemon
