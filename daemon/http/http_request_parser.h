// http_request_parser: Beast's request parser as the HTTP transport sets it up (header and
// body limits), and the status each parse error is answered with: 431 for a header over
// the limit, 413 for a body over it, 400 for anything malformed. Shared by the transport
// and the fuzz target (tests/fuzz/fuzz_http.cpp), so the fuzzer parses what the daemon parses.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <utility>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

namespace hearth::daemon {

inline void configure_request_parser(boost::beast::http::request_parser<boost::beast::http::string_body> & p,
                                     size_t max_header_bytes, size_t max_body_bytes) {
    p.header_limit(static_cast<std::uint32_t>(max_header_bytes));
    p.body_limit(max_body_bytes);
}

inline std::pair<unsigned, std::string> parse_error_status(const boost::beast::error_code & ec) {
    namespace http = boost::beast::http;
    if (ec == http::error::header_limit) return {431, "the request's header is over the limit"};
    if (ec == http::error::body_limit) return {413, "the request's body is over the limit (limits.max-message-bytes)"};
    return {400, "malformed request: " + ec.message()};
}

}  // namespace hearth::daemon
