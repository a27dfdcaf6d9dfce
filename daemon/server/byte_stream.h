// byte_stream: one connection's bytes, whatever carries them (a Unix socket, a loopback
// TCP socket, or stdin/stdout). A session drives exactly one read and at most one write at
// a time; completion handlers run on the io_context (the session re-dispatches them onto
// its strand). Implementations wrap Asio objects.
// Thread-safety: not thread-safe; used from the owning session's strand only.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/system/error_code.hpp>

#include "base/result.h"

namespace hearth::daemon {

using io_handler = std::function<void(boost::system::error_code, size_t)>;

class byte_stream {
public:
    virtual ~byte_stream() = default;
    virtual void async_read_some(boost::asio::mutable_buffer buf, io_handler h) = 0;
    virtual void async_write_all(boost::asio::const_buffer buf, io_handler h) = 0;
    virtual void close() = 0;                       // cancels pending operations; idempotent
    // Best effort and never blocking: a few bytes for a peer that is refused before close()
    // (they fit an empty socket buffer). A no-op where there is no such peer.
    virtual void write_now(std::string_view bytes) { (void)bytes; }
    virtual std::string describe() const = 0;       // for logs: "unix uid 1000", "tcp 127.0.0.1:5123", "stdio"
};

std::unique_ptr<byte_stream> make_tcp_stream(boost::asio::ip::tcp::socket s);
std::unique_ptr<byte_stream> make_unix_stream(boost::asio::local::stream_protocol::socket s);
// Takes over fds 0 and 1 (duplicated), then points fd 1 at fd 2 so that a stray write to
// stdout from anywhere in the process lands in the log instead of the protocol stream.
// Regular files work too (Asio treats what epoll refuses as always ready), so a transcript
// file can be piped in with `<`.
result<std::unique_ptr<byte_stream>> make_stdio_stream(boost::asio::io_context & io);

}  // namespace hearth::daemon
