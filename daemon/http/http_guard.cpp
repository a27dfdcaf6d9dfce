#include "daemon/http/http_guard.h"

#include <algorithm>
#include <cctype>

namespace hearth::daemon {

namespace http = boost::beast::http;

namespace {

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    });
}

bool is_port(std::string_view p) {
    return !p.empty() && p.size() <= 5 && std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool is_loopback_host(std::string_view host) {
    std::string_view name = host;
    if (!name.empty() && name.front() == '[') {   // [::1] or [::1]:port
        const size_t close = name.find(']');
        if (close == std::string_view::npos) return false;
        const std::string_view rest = name.substr(close + 1);
        if (!rest.empty() && (rest.front() != ':' || !is_port(rest.substr(1)))) return false;
        return name.substr(1, close - 1) == "::1";
    }
    if (const size_t colon = name.find(':'); colon != std::string_view::npos) {
        if (!is_port(name.substr(colon + 1))) return false;
        name = name.substr(0, colon);
    }
    return iequals(name, "localhost") || name == "127.0.0.1";
}

std::optional<http_refusal> check_request(const http::request_header<> & h, const token_check & token_ok) {
    if (h.method() == http::verb::options)
        return http_refusal{403, "OPTIONS refused: cross-origin requests are not served (no CORS)"};
    if (h.find(http::field::origin) != h.end())
        return http_refusal{403, "a request with an Origin header is refused: browsers' cross-origin requests are not served"};
    const auto host = h.find(http::field::host);
    if (host == h.end()) return http_refusal{400, "the Host header is missing"};
    if (!is_loopback_host(host->value()))
        return http_refusal{403, "Host '" + std::string(host->value()) + "' refused: expected localhost, 127.0.0.1 or [::1]"};
    if (token_ok) {
        const auto auth = h.find(http::field::authorization);
        if (auth == h.end()) return http_refusal{401, "missing `Authorization: Bearer <token>` (the token is in the daemon's token file)"};
        std::string_view v = auth->value();
        if (v.size() < 7 || !iequals(v.substr(0, 7), "Bearer ")) return http_refusal{401, "Authorization: expected `Bearer <token>`"};
        v.remove_prefix(7);
        while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
        while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
        if (!token_ok(v)) return http_refusal{401, "wrong token"};
    }
    return std::nullopt;
}

}  // namespace hearth::daemon
