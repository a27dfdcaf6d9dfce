// http_guard: what a request must be before the API sees it. A local HTTP server is reachable
// by every web page the user opens (a page may send requests to 127.0.0.1, and DNS
// rebinding can give an attacker's name a loopback address), so:
//   - the Host header must be a loopback name (localhost, 127.0.0.1, [::1], any port): a
//     rebound name is refused;
//   - any Origin header is refused, and so is every OPTIONS (CORS preflight): the server
//     never answers a browser's cross-origin request, and sends no CORS headers;
//   - `Authorization: Bearer <token>` must carry the daemon's token, unless the daemon was
//     started with the explicit opt-out (http-no-token).
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>

namespace hearth::daemon {

struct http_refusal {
    unsigned status = 403;
    std::string message;
};

// token_ok: compares a presented token with the daemon's in constant time; empty: no token needed.
using token_check = std::function<bool(std::string_view presented)>;

bool is_loopback_host(std::string_view host);

std::optional<http_refusal> check_request(const boost::beast::http::request_header<> & h, const token_check & token_ok);

}  // namespace hearth::daemon
