#include "lsp/framing.h"

#include <algorithm>
#include <cctype>

namespace hearth::lsp {

namespace {

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    });
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// Printable excerpt of untrusted bytes for an error message.
std::string quote(std::string_view s) {
    std::string out = "'";
    for (char c : s.substr(0, 60)) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f) {
            out += c;
        } else {
            static const char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        }
    }
    if (s.size() > 60) out += "...";
    return out + "'";
}

bool looks_like_http(std::string_view line) {
    return line.starts_with("HTTP/") || line.find(" HTTP/") != std::string_view::npos;
}

// The charset parameter of a Content-Type value, lower-cased and unquoted; "" if absent.
std::string charset_of(std::string_view value) {
    size_t pos = 0;
    while ((pos = value.find(';', pos)) != std::string_view::npos) {
        ++pos;
        std::string_view param = value.substr(pos);
        param = param.substr(0, param.find(';'));
        param = trim(param);
        const size_t eq = param.find('=');
        if (eq == std::string_view::npos) continue;
        if (!iequals(trim(param.substr(0, eq)), "charset")) continue;
        std::string_view v = trim(param.substr(eq + 1));
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
        std::string out(v);
        for (char & c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return out;
    }
    return "";
}

}  // namespace

void frame_reader::fail(framing_errc code, std::string message, std::vector<frame_item> & out) {
    framing_error e{code, std::move(message)};
    if (e.fatal()) {
        failed_ = true;
        buf_.clear();
        buf_.shrink_to_fit();
    }
    out.emplace_back(std::move(e));
}

bool frame_reader::idle() const {
    return !failed_ && state_ == state::header && buf_.empty() && header_bytes_ == 0;
}

bool frame_reader::parse_header_line(std::string_view line, std::vector<frame_item> & out) {
    const std::string where = " (header at byte " + std::to_string(message_start_) + ")";
    const size_t colon = line.find(':');
    if (looks_like_http(line) && (colon == std::string_view::npos || line.find(' ') < colon)) {
        fail(framing_errc::http_request,
             "HTTP request line " + quote(line) + where +
                 ": this port speaks the LSP base protocol (Content-Length framing), not HTTP",
             out);
        return false;
    }
    if (colon == std::string_view::npos || colon == 0) {
        fail(framing_errc::unknown_header,
             "malformed header line " + quote(line) + where + ": expected 'Name: value'", out);
        return false;
    }
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = trim(line.substr(colon + 1));
    if (iequals(name, "Content-Length")) {
        if (have_length_) {
            fail(framing_errc::bad_length, "repeated Content-Length header" + where, out);
            return false;
        }
        const bool digits = !value.empty() && value.size() <= 18 &&
                            std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!digits) {
            fail(framing_errc::bad_length,
                 "Content-Length " + quote(value) + where + ": expected a decimal byte count", out);
            return false;
        }
        size_t n = 0;
        for (char c : value) n = n * 10 + static_cast<size_t>(c - '0');
        body_len_ = n;
        have_length_ = true;
        return true;
    }
    if (iequals(name, "Content-Type")) {
        if (!charset_.empty() || bad_charset_) {
            fail(framing_errc::unknown_header, "repeated Content-Type header" + where, out);
            return false;
        }
        const std::string cs = charset_of(value);
        charset_ = cs.empty() ? "utf-8" : cs;
        // "utf8" is accepted for backwards compatibility, as the spec says.
        if (charset_ != "utf-8" && charset_ != "utf8") bad_charset_ = true;
        return true;
    }
    fail(framing_errc::unknown_header,
         "unexpected header " + quote(name) + where +
             ": only Content-Length and Content-Type are allowed (the LSP base protocol, not HTTP)",
         out);
    return false;
}

bool frame_reader::finish_header(std::vector<frame_item> & out) {
    const std::string where = " (header at byte " + std::to_string(message_start_) + ")";
    if (!have_length_) {
        fail(framing_errc::missing_length, "header section without Content-Length" + where, out);
        return false;
    }
    if (body_len_ > limits_.max_body_bytes) {
        fail(framing_errc::body_too_large,
             "message body of " + std::to_string(body_len_) + " bytes" + where + " exceeds the limit of " +
                 std::to_string(limits_.max_body_bytes) + " bytes; skipped",
             out);
        state_ = state::skip;
        skip_left_ = body_len_;
    } else if (bad_charset_) {
        fail(framing_errc::bad_content_type,
             "Content-Type charset " + quote(charset_) + where + ": expected utf-8; message skipped", out);
        state_ = state::skip;
        skip_left_ = body_len_;
    } else {
        state_ = state::body;
        buf_.clear();
        buf_.reserve(body_len_);
    }
    return true;
}

void frame_reader::feed(std::string_view chunk, std::vector<frame_item> & out) {
    size_t i = 0;
    auto next_message = [this] {
        state_ = state::header;
        buf_.clear();
        header_bytes_ = 0;
        body_len_ = 0;
        skip_left_ = 0;
        have_length_ = false;
        bad_charset_ = false;
        charset_.clear();
        message_start_ = offset_;
    };
    while (!failed_ && (i < chunk.size() || (state_ == state::body && buf_.size() == body_len_) ||
                        (state_ == state::skip && skip_left_ == 0))) {
        if (state_ == state::header) {
            if (header_bytes_ == 0 && buf_.empty()) message_start_ = offset_;
            const size_t nl = chunk.find('\n', i);
            const size_t take = (nl == std::string_view::npos ? chunk.size() : nl + 1) - i;
            if (header_bytes_ + buf_.size() + take > limits_.max_header_bytes) {
                fail(framing_errc::header_too_long,
                     "header section starting at byte " + std::to_string(message_start_) + " is longer than " +
                         std::to_string(limits_.max_header_bytes) + " bytes",
                     out);
                return;
            }
            buf_.append(chunk.substr(i, take));
            i += take;
            offset_ += take;
            if (nl == std::string_view::npos) break;   // line incomplete: wait for more
            std::string line = std::move(buf_);
            buf_.clear();
            header_bytes_ += line.size();
            line.pop_back();   // '\n'
            const bool crlf = !line.empty() && line.back() == '\r';
            if (crlf) line.pop_back();
            if (!crlf) {
                if (looks_like_http(line)) {
                    parse_header_line(line, out);   // reports the HTTP line, fatal
                } else {
                    fail(framing_errc::bad_line_end,
                         "header line " + quote(line) + " at byte " + std::to_string(offset_ - line.size() - 1) +
                             " ends with a bare LF: expected CRLF",
                         out);
                }
                return;
            }
            if (line.empty()) {
                if (!finish_header(out)) return;
            } else if (!parse_header_line(line, out)) {
                return;
            }
        } else if (state_ == state::body) {
            const size_t take = std::min(body_len_ - buf_.size(), chunk.size() - i);
            buf_.append(chunk.substr(i, take));
            i += take;
            offset_ += take;
            if (buf_.size() == body_len_) {
                out.emplace_back(std::move(buf_));
                next_message();
            }
        } else {   // skip
            const size_t take = std::min(skip_left_, chunk.size() - i);
            skip_left_ -= take;
            i += take;
            offset_ += take;
            if (skip_left_ == 0) next_message();
        }
    }
}

std::string frame_message(std::string_view body) {
    std::string out = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    out.append(body);
    return out;
}

}  // namespace hearth::lsp
