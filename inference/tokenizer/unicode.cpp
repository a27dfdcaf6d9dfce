#include "inference/tokenizer/unicode.h"

#include <array>

namespace hearth::inference::tokenizer {

namespace {

struct byte_tables {
    std::array<std::string, 256> spelled;   // raw byte -> UTF-8 of its code point
    std::array<int16_t, 0x144> byte_of;     // code point (< 0x144) -> raw byte, -1 if none
};

const byte_tables & tables() {
    static const byte_tables t = [] {
        byte_tables r;
        r.byte_of.fill(-1);
        auto printable = [](int b) {
            return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        };
        uint32_t next = 0x100;
        for (int b = 0; b < 256; ++b) {
            const uint32_t cp = printable(b) ? uint32_t(b) : next++;
            utf8_append(r.spelled[b], cp);
            r.byte_of[cp] = int16_t(b);
        }
        return r;
    }();
    return t;
}

}  // namespace

size_t utf8_seq_len(unsigned char c) {
    static constexpr uint8_t lookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return lookup[c >> 4];
}

size_t utf8_incomplete_tail(std::string_view s) {
    // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
    const size_t n = s.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        const auto c = static_cast<unsigned char>(s[n - back]);
        if ((c & 0xC0) == 0x80) continue;          // continuation: keep looking for the lead
        if (c < 0xC0 || c > 0xF4) return 0;        // ASCII or a byte no sequence starts with
        const size_t need = utf8_seq_len(c);
        return need > back ? back : 0;
    }
    return 0;
}

void utf8_append(std::string & out, uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

std::string_view byte_to_symbol(uint8_t b) {
    return tables().spelled[b];
}

std::optional<std::string> symbols_to_bytes(std::string_view s) {
    // The alphabet only uses code points below U+0144: one or two UTF-8 bytes each.
    const auto & t = tables();
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const auto c0 = static_cast<unsigned char>(s[i]);
        uint32_t cp;
        if (c0 < 0x80) {
            cp = c0;
            i += 1;
        } else if ((c0 & 0xE0) == 0xC0 && i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xC0) == 0x80) {
            cp = ((c0 & 0x1F) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3F);
            i += 2;
        } else {
            return std::nullopt;
        }
        if (cp >= t.byte_of.size() || t.byte_of[cp] < 0) return std::nullopt;
        out += char(t.byte_of[cp]);
    }
    return out;
}

std::string bytes_to_symbols(std::string_view raw) {
    const auto & t = tables();
    std::string out;
    out.reserve(raw.size() * 2);
    for (const char c : raw) out += t.spelled[static_cast<unsigned char>(c)];
    return out;
}

}  // namespace hearth::inference::tokenizer
