#include "lsp/utf8.h"

namespace hearth::lsp {

namespace {

struct scan {
    size_t len;       // bytes of the well-formed sequence at i, or 0 if there is none
    size_t prefix;    // otherwise: bytes that are a valid start of one (the maximal subpart)
    bool truncated;   // ... and the input ended inside it
};

scan sequence_at(std::string_view s, size_t i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) return {1, 0, false};
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xbf;   // allowed range of the second byte
    if (b0 >= 0xc2 && b0 <= 0xdf) {
        len = 2;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
        len = 3;
        if (b0 == 0xe0) lo = 0xa0;         // no overlong forms
        if (b0 == 0xed) hi = 0x9f;         // no UTF-16 surrogates
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
        len = 4;
        if (b0 == 0xf0) lo = 0x90;
        if (b0 == 0xf4) hi = 0x8f;         // nothing past U+10FFFF
    } else {
        return {0, 1, false};
    }
    for (size_t k = 1; k < len; ++k) {
        if (i + k >= s.size()) return {0, k, true};
        const auto b = static_cast<unsigned char>(s[i + k]);
        if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf)) return {0, k, false};
    }
    return {len, 0, false};
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        const scan r = sequence_at(s, i);
        if (r.len == 0) return false;
        i += r.len;
    }
    return true;
}

std::string to_valid_utf8(std::string_view s) {
    if (is_valid_utf8(s)) return std::string(s);
    std::string out;
    out.reserve(s.size() + 8);
    for (size_t i = 0; i < s.size();) {
        const scan r = sequence_at(s, i);
        if (r.len > 0) {
            out.append(s.substr(i, r.len));
            i += r.len;
        } else {
            out += "\xef\xbf\xbd";   // U+FFFD for the maximal invalid subpart
            i += r.prefix;
        }
    }
    return out;
}

size_t utf8_complete_prefix(std::string_view s) {
    // Only the last 3 bytes can start an unfinished sequence.
    for (size_t i = s.size() > 3 ? s.size() - 3 : 0; i < s.size(); ++i) {
        const scan r = sequence_at(s, i);
        if (r.len == 0 && r.truncated) return i;
    }
    return s.size();
}

}  // namespace hearth::lsp
