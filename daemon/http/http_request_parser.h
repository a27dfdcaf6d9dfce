// http_request_parser: how the HTTP transport reads a request, header first. Beast's request
// parser takes the header alone (its size limit; no body limit yet); check_header then decides
// from the header what happens before a byte of the body is read: a refusal (http_guard's
// checks, then the route, Expect, Content-Length), answered at once, or the body's read, with
// `100 Continue` first for a client that waits for it, and the body limit set only now. A
// refused client is refused for what it is (no token, a foreign Host) before the length it
// announces. parse_error_status maps Beast's errors to their answers: 431 for a header over
// the limit, 413 for a body over it, 400 for anything malformed.
// Shared by the transport and the fuzz target (tests/fuzz/fuzz_http.cpp), so the fuzzer
// parses and checks what the daemon does.
// Thread-safety: pure functions of their arguments.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "daemon/http/http_guard.h"

namespace hearth::daemon {

using request_parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// A fresh parser, set up to read a header of at most max_header_bytes.
void configure_request_parser(request_parser & p, size_t max_header_bytes);

// What follows a header that is in, while its body is not.
struct header_verdict {
    std::optional<http_refusal> refusal;   // answer it and close: the body is never read
    bool send_continue = false;            // the client waits for `100 Continue` to send its body
};

// p's header must be done (p.is_header_done()). On no refusal, p's body limit is max_body_bytes.
header_verdict check_header(request_parser & p, const token_check & token_ok, size_t max_body_bytes);

std::pair<unsigned, std::string> parse_error_status(const boost::beast::error_code & ec);

// The request target without its query: what the API routes on.
inline std::string_view target_path(std::string_view target) { return target.substr(0, target.find('?')); }

}  // namespace hearth::daemon
