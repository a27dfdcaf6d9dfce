#include "daemon/http/http_request_parser.h"

#include <boost/beast/core/string.hpp>
#include <fmt/format.h>

#include "daemon/http/http_api.h"

namespace hearth::daemon {

namespace http = boost::beast::http;

void configure_request_parser(request_parser & p, size_t max_header_bytes) {
    p.header_limit(static_cast<std::uint32_t>(max_header_bytes));
    // Beast's default (1 MB) would refuse a long Content-Length before the header is checked.
    p.body_limit(boost::none);
}

header_verdict check_header(request_parser & p, const token_check & token_ok, size_t max_body_bytes) {
    const http::request_header<> & h = p.get().base();
    if (auto no = check_request(h, token_ok)) return {std::move(no)};
    if (auto no = route_refusal(h.method_string(), target_path(h.target()))) return {std::move(no)};
    bool waits = false;
    if (const auto expect = h.find(http::field::expect); expect != h.end()) {
        if (!boost::beast::iequals(expect->value(), "100-continue"))
            return {http_refusal{417, "Expect: only 100-continue is understood"}};
        waits = h.version() >= 11;   // an HTTP/1.0 client's expectation is ignored (RFC 9110, 10.1.1)
    }
    if (const auto n = p.content_length(); n && *n > max_body_bytes)
        return {http_refusal{413, fmt::format("the request's body ({} bytes) is over the limit of {} (limits.max-message-bytes)", *n,
                                              max_body_bytes)}};
    p.body_limit(max_body_bytes);   // a chunked body is counted as it comes
    return {std::nullopt, waits && !p.is_done()};
}

std::pair<unsigned, std::string> parse_error_status(const boost::beast::error_code & ec) {
    if (ec == http::error::header_limit) return {431, "the request's header is over the limit"};
    if (ec == http::error::body_limit) return {413, "the request's body is over the limit (limits.max-message-bytes)"};
    return {400, "malformed request: " + ec.message()};
}

}  // namespace hearth::daemon
