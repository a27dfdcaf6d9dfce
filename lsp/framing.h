// LSP base-protocol framing: `Content-Length: N\r\n[Content-Type: ...\r\n]\r\n<N bytes>`.
// frame_reader is an incremental parser fed arbitrary byte chunks (a message may arrive
// split across many reads, or several messages in one); it yields whole bodies in order.
// Only the two headers the LSP defines are accepted. Anything else (an HTTP request line,
// `Host:`, `Origin:`, a bare LF) is a fatal error: the transport must close the
// connection, so a web page cannot talk to the daemon by posting to its port.
// Fatal errors leave the stream position unknown; after one, feed() ignores all input.
// A body over the limit is refused from its header alone (never buffered): its bytes are
// skipped and the error is not fatal, since the stream stays in step.
// Thread-safety: a frame_reader is owned by one connection and used from one thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace hearth::lsp {

struct framing_limits {
    size_t max_body_bytes = 4u << 20;     // bodies larger than this are refused
    size_t max_header_bytes = 8u << 10;   // the whole header section, separators included
};

enum class framing_errc {
    unknown_header,        // fatal: a header other than Content-Length / Content-Type
    http_request,          // fatal: `GET / HTTP/1.1`-style line (a browser or curl)
    bad_line_end,          // fatal: a header line ended by a bare LF
    missing_length,        // fatal: header section without Content-Length
    bad_length,            // fatal: Content-Length not a decimal integer, or repeated
    header_too_long,       // fatal: header section past max_header_bytes
    body_too_large,        // not fatal: body skipped, stream stays in step
    bad_content_type,      // not fatal: charset other than utf-8; body skipped
};

struct framing_error {
    framing_errc code;
    std::string message;   // what, where (byte offset in the stream), what was expected
    bool fatal() const { return code != framing_errc::body_too_large && code != framing_errc::bad_content_type; }
};

// One result of parsing: a complete body, or an error.
using frame_item = std::variant<std::string, framing_error>;

class frame_reader {
public:
    explicit frame_reader(framing_limits limits = {}) : limits_(limits) {}

    // Consumes `chunk` and appends every complete body (or error) to `out`, in stream order.
    void feed(std::string_view chunk, std::vector<frame_item> & out);

    bool failed() const { return failed_; }           // a fatal error happened
    bool idle() const;                                // between messages (nothing buffered)
    size_t bytes_consumed() const { return offset_; } // stream offset, for error messages
    const framing_limits & limits() const { return limits_; }

private:
    enum class state { header, body, skip };
    bool parse_header_line(std::string_view line, std::vector<frame_item> & out);
    bool finish_header(std::vector<frame_item> & out);
    void fail(framing_errc code, std::string message, std::vector<frame_item> & out);

    framing_limits limits_;
    state state_ = state::header;
    std::string buf_;              // header bytes so far, or body bytes so far
    size_t header_bytes_ = 0;      // bytes of the current header section
    size_t body_len_ = 0;          // announced Content-Length of the current message
    size_t skip_left_ = 0;         // bytes still to drop of a refused body
    bool have_length_ = false;
    bool bad_charset_ = false;
    std::string charset_;
    size_t offset_ = 0;            // stream bytes consumed before buf_
    size_t message_start_ = 0;     // stream offset where the current header began
    bool failed_ = false;
};

// Frames one outgoing body: `Content-Length: <bytes>\r\n\r\n<body>`.
std::string frame_message(std::string_view body);

}  // namespace hearth::lsp
