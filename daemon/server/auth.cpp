#include "daemon/server/auth.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <openssl/crypto.h>
#include <openssl/rand.h>

namespace hearth::daemon {

namespace {
constexpr size_t k_max_auth_header = 1024;
constexpr size_t k_max_auth_body = 4096;

bool is_hex_token(std::string_view t) {
    if (t.size() != k_token_hex_chars) return false;
    for (char c : t)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}
}  // namespace

result<std::string> generate_token() {
    unsigned char raw[k_token_hex_chars / 2];
    if (RAND_bytes(raw, sizeof raw) != 1) return fail("token: OpenSSL RAND_bytes failed (no entropy source?)");
    static constexpr char digits[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(k_token_hex_chars);
    for (unsigned char b : raw) {
        hex += digits[b >> 4];
        hex += digits[b & 15];
    }
    OPENSSL_cleanse(raw, sizeof raw);
    return hex;
}

status write_token_file(const std::string & path, std::string_view token) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    ::unlink(tmp.c_str());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return fail("token file ", tmp, ": ", std::strerror(errno));
    std::string data(token);
    data += '\n';
    const ssize_t n = ::write(fd, data.data(), data.size());
    const int e = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(data.size())) {
        ::unlink(tmp.c_str());
        return fail("token file ", tmp, ": write: ", std::strerror(e));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int re = errno;
        ::unlink(tmp.c_str());
        return fail("token file ", path, ": rename: ", std::strerror(re));
    }
    return {};
}

result<std::string> read_token_file(const std::string & path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return fail("token file ", path, ": ", std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return fail("token file ", path, ": not a regular file");
    }
    if ((st.st_mode & 077) != 0 || st.st_uid != ::getuid()) {
        ::close(fd);
        return fail("token file ", path, ": must be owned by this user with mode 600");
    }
    char buf[k_token_hex_chars + 2];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    if (n < 0) return fail("token file ", path, ": read: ", std::strerror(errno));
    std::string_view t(buf, static_cast<size_t>(n));
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.remove_suffix(1);
    if (!is_hex_token(t)) return fail("token file ", path, ": expected 64 lowercase hex characters");
    return std::string(t);
}

bool tokens_equal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

auth_gate::state auth_gate::reject(std::string why) {
    reason_ = std::move(why);
    buf_.clear();
    return state_ = state::rejected;
}

auth_gate::state auth_gate::feed(std::string_view bytes) {
    if (state_ != state::need_more) return state_;
    buf_.append(bytes);
    const size_t header_end = buf_.find("\r\n\r\n");
    if (header_end == std::string::npos) {
        if (buf_.size() > k_max_auth_header) return reject("auth: header section longer than 1 KiB");
        return state_;
    }
    if (header_end > k_max_auth_header) return reject("auth: header section longer than 1 KiB");
    // Headers: Content-Length (required) and Content-Type (ignored); nothing else.
    std::string_view headers(buf_.data(), header_end);
    std::optional<size_t> length;
    while (!headers.empty()) {
        const size_t eol = headers.find("\r\n");
        std::string_view line = headers.substr(0, eol);
        headers = eol == std::string_view::npos ? std::string_view{} : headers.substr(eol + 2);
        const size_t colon = line.find(':');
        if (colon == std::string_view::npos) return reject("auth: malformed header line; expected 'Content-Length: N'");
        std::string name(line.substr(0, colon));
        for (char & c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
        if (name == "content-length") {
            size_t n = 0;
            auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
            if (ec != std::errc{} || p != value.data() + value.size() || length)
                return reject("auth: bad Content-Length");
            length = n;
        } else if (name != "content-type") {
            return reject("auth: unexpected header '" + name + "'; expected Content-Length");
        }
    }
    if (!length) return reject("auth: missing Content-Length");
    if (*length > k_max_auth_body) return reject("auth: message body over 4 KiB");
    const size_t body_start = header_end + 4;
    if (buf_.size() < body_start + *length) return state_;
    const std::string body = buf_.substr(body_start, *length);
    leftover_ = buf_.substr(body_start + *length);
    buf_.clear();
    return check_body(body);
}

auth_gate::state auth_gate::check_body(std::string_view body) {
    boost::system::error_code ec;
    boost::json::parse_options opts;
    opts.max_depth = 8;
    const boost::json::value v = boost::json::parse(body, ec, {}, opts);
    if (ec || !v.is_object()) return reject("auth: first message is not a JSON object");
    const auto & o = v.get_object();
    const auto * method = o.if_contains("method");
    if (!method || !method->is_string() || method->get_string() != "hearth/auth")
        return reject("auth: the first message on TCP must be hearth/auth");
    if (const auto * id = o.if_contains("id"); id && (id->is_int64() || id->is_uint64() || id->is_string()))
        reply_id_json_ = boost::json::serialize(*id);
    const auto * params = o.if_contains("params");
    const auto * token = params && params->is_object() ? params->get_object().if_contains("token") : nullptr;
    if (!token || !token->is_string()) return reject("auth: params.token missing or not a string");
    const auto & t = token->get_string();
    if (!tokens_equal(std::string_view(t.data(), t.size()), expected_)) return reject("auth: wrong token");
    return state_ = state::accepted;
}

}  // namespace hearth::daemon
