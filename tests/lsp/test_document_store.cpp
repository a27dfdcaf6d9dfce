#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "lsp/document_store.h"

using namespace hearth::lsp;

namespace {

// ---- An independent reference: the text as code points, positions counted per code point.

std::u32string decode(std::string_view s) {
    std::u32string out;
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const size_t n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
        char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
        for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
        out.push_back(cp);
        i += n;
    }
    return out;
}

std::string encode(std::u32string_view s) {
    std::string out;
    for (char32_t cp : s) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xc0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xe0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        } else {
            out += static_cast<char>(0xf0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        }
    }
    return out;
}

uint32_t ref_units(char32_t cp, position_encoding e) {
    if (e == position_encoding::utf32) return 1;
    if (e == position_encoding::utf16) return cp > 0xffff ? 2 : 1;
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

// Code-point index of a position: lines end at \n, \r\n or \r; clamp; snap back inside a character.
size_t ref_index(const std::u32string & t, position p, position_encoding e) {
    size_t i = 0;
    for (uint32_t line = 0; line < p.line; ++line) {
        while (i < t.size() && t[i] != U'\n' && t[i] != U'\r') ++i;
        if (i == t.size()) return t.size();
        if (t[i] == U'\r' && i + 1 < t.size() && t[i + 1] == U'\n') ++i;
        ++i;
    }
    uint32_t count = 0;
    while (i < t.size() && t[i] != U'\n' && t[i] != U'\r') {
        const uint32_t u = ref_units(t[i], e);
        if (count + u > p.character) break;
        count += u;
        ++i;
    }
    return i;
}

document make_doc(std::string text, position_encoding e) {
    return document("file:///t", "plaintext", 1, std::move(text), e);
}

}  // namespace

TEST_CASE("document: positions in the three encodings, surrogate pairs snap back", "[lsp][documents]") {
    const std::string text = "a😀b";   // 1 + 4 + 1 bytes; UTF-16: 1 + 2 + 1 units
    auto d16 = make_doc(text, position_encoding::utf16);
    CHECK(d16.offset_of({0, 0}) == 0);
    CHECK(d16.offset_of({0, 1}) == 1);
    CHECK(d16.offset_of({0, 2}) == 1);   // between the two surrogates: the start of the pair
    CHECK(d16.offset_of({0, 3}) == 5);
    CHECK(d16.offset_of({0, 4}) == 6);
    CHECK(d16.offset_of({0, 99}) == 6);   // past the end of the line: clamped
    CHECK(d16.position_of(5) == position{0, 3});
    CHECK(d16.position_of(3) == position{0, 1});   // inside the UTF-8 sequence

    auto d8 = make_doc(text, position_encoding::utf8);
    CHECK(d8.offset_of({0, 3}) == 1);
    CHECK(d8.offset_of({0, 5}) == 5);
    CHECK(d8.position_of(6) == position{0, 6});

    auto d32 = make_doc(text, position_encoding::utf32);
    CHECK(d32.offset_of({0, 2}) == 5);
    CHECK(d32.position_of(6) == position{0, 3});

    CHECK(document::units("é€😀", position_encoding::utf8) == 9);
    CHECK(document::units("é€😀", position_encoding::utf16) == 4);
    CHECK(document::units("é€😀", position_encoding::utf32) == 3);
}

TEST_CASE("document: CRLF, CR and LF line ends", "[lsp][documents]") {
    auto d = make_doc("ab\r\ncd\re\n\nf", position_encoding::utf16);
    REQUIRE(d.line_count() == 5);
    CHECK(d.line_span(0) == std::pair<size_t, size_t>{0, 2});
    CHECK(d.line_span(1) == std::pair<size_t, size_t>{4, 6});
    CHECK(d.line_span(2) == std::pair<size_t, size_t>{7, 8});
    CHECK(d.line_span(3) == std::pair<size_t, size_t>{9, 9});
    CHECK(d.line_span(4) == std::pair<size_t, size_t>{10, 11});
    CHECK(d.offset_of({0, 3}) == 2);   // never between \r and \n
    CHECK(d.offset_of({1, 0}) == 4);
    CHECK(d.offset_of({9, 0}) == 11);  // past the last line: the end of the document
    CHECK(d.position_of(3) == position{0, 2});   // inside the CRLF
    CHECK(d.position_of(4) == position{1, 0});
    CHECK(d.position_of(11) == position{4, 1});
    CHECK(d.position_of(999) == position{4, 1});

    SECTION("an edit that joins a CR and an LF into one line end") {
        auto e = make_doc("a\r", position_encoding::utf16);
        CHECK(e.line_count() == 2);
        e.apply({range{{1, 0}, {1, 0}}, "\nb"});
        CHECK(e.text() == "a\r\nb");
        CHECK(e.line_count() == 2);
        CHECK(e.offset_of({1, 1}) == 4);
    }
    SECTION("a trailing newline starts an empty last line") {
        auto e = make_doc("x\n", position_encoding::utf16);
        CHECK(e.line_count() == 2);
        CHECK(e.offset_of({1, 0}) == 2);
    }
}

TEST_CASE("document: incremental edits with non-ASCII text", "[lsp][documents]") {
    for (auto enc : {position_encoding::utf8, position_encoding::utf16, position_encoding::utf32}) {
        INFO("encoding " << position_encoding_name(enc));
        auto d = make_doc("héllo\r\nwörld 😀!\n", enc);
        const auto pos = [&](uint32_t line, std::string_view before) { return position{line, document::units(before, enc)}; };
        d.apply({range{pos(1, "wörld "), pos(1, "wörld 😀")}, "🎉🎉"});
        CHECK(d.text() == "héllo\r\nwörld 🎉🎉!\n");
        d.apply({range{pos(0, "h"), pos(1, "w")}, "€\n"});
        CHECK(d.text() == "h€\nörld 🎉🎉!\n");
        d.apply({range{pos(2, ""), pos(2, "")}, "tail"});
        CHECK(d.text() == "h€\nörld 🎉🎉!\ntail");
        d.apply({range{pos(1, "örld 🎉🎉!"), pos(0, "h")}, ""});   // reversed range: same span
        CHECK(d.text() == "h\ntail");
        d.apply({std::nullopt, "new"});
        CHECK(d.text() == "new");
    }
}

TEST_CASE("document: random edits match the code-point reference", "[lsp][documents]") {
    const std::vector<std::u32string> pieces = {U"a", U"Z", U" ", U"é", U"€", U"😀", U"𝄞", U"\n", U"\r\n", U"\r", U"x\r"};
    std::mt19937 rng(1234);
    auto rnd = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
    auto random_text = [&](size_t n) {
        std::u32string s;
        for (size_t i = 0; i < n; ++i) s += pieces[rnd(pieces.size())];
        return s;
    };
    for (auto enc : {position_encoding::utf8, position_encoding::utf16, position_encoding::utf32}) {
        INFO("encoding " << position_encoding_name(enc));
        for (int trial = 0; trial < 40; ++trial) {
            std::u32string ref = random_text(rnd(30));
            auto d = make_doc(encode(ref), enc);
            for (int step = 0; step < 30; ++step) {
                const auto lines = static_cast<uint32_t>(d.line_count());
                auto random_pos = [&] {
                    return position{static_cast<uint32_t>(rnd(lines + 2)), static_cast<uint32_t>(rnd(14))};
                };
                const position a = random_pos(), b = random_pos();
                const std::u32string insert = random_text(rnd(4));
                size_t ia = ref_index(ref, a, enc), ib = ref_index(ref, b, enc);
                if (ib < ia) std::swap(ia, ib);
                // position -> offset agrees with the reference
                REQUIRE(d.offset_of(a) == encode(ref.substr(0, ref_index(ref, a, enc))).size());
                ref.replace(ia, ib - ia, insert);
                d.apply({range{a, b}, encode(insert)});
                REQUIRE(d.text() == encode(ref));
                REQUIRE(decode(d.text()) == ref);
                // the line index kept up by the edit equals one built from scratch
                const auto fresh = make_doc(d.text(), enc);
                REQUIRE(d.line_count() == fresh.line_count());
                for (uint32_t l = 0; l < fresh.line_count(); ++l) REQUIRE(d.line_span(l) == fresh.line_span(l));
                // offset -> position -> offset is the identity on code-point boundaries
                const size_t cp = rnd(ref.size() + 1);
                const size_t off = encode(ref.substr(0, cp)).size();
                const position p = d.position_of(off);
                const bool inside_crlf = cp > 0 && cp < ref.size() && ref[cp - 1] == U'\r' && ref[cp] == U'\n';
                if (!inside_crlf) REQUIRE(d.offset_of(p) == off);
                REQUIRE(ref_index(ref, p, enc) == (inside_crlf ? cp - 1 : cp));
            }
        }
    }
}

TEST_CASE("document store: open, change, close, versions, limits", "[lsp][documents]") {
    document_store store(document_limits{.max_documents = 2, .max_document_bytes = 16});
    store.set_encoding(position_encoding::utf16);
    auto open = [&](std::string uri, std::string text) {
        return store.open(did_open_params{text_document_item{std::move(uri), "c", 1, std::move(text)}});
    };
    REQUIRE(open("file:///a", "int x;"));
    const document * a = store.find("file:///a");
    REQUIRE(a);
    CHECK(a->version() == 1);
    CHECK(a->language_id() == "c");

    SECTION("changes apply in order and set the version") {
        did_change_params ch{{"file:///a", 2}, {{range{{0, 4}, {0, 5}}, "y"}, {range{{0, 6}, {0, 6}}, " // ü"}}};
        REQUIRE(store.change(ch));
        CHECK(store.find("file:///a")->text() == "int y; // ü");
        CHECK(store.find("file:///a")->version() == 2);
    }
    SECTION("an older or equal version is ignored") {
        auto s = store.change(did_change_params{{"file:///a", 1}, {{std::nullopt, "zzz"}}});
        REQUIRE(!s);
        CHECK_THAT(s.message(), Catch::Contains("version 1 is not newer than 1"));
        CHECK(store.find("file:///a")->text() == "int x;");
    }
    SECTION("a change on a document that is not open") {
        auto s = store.change(did_change_params{{"file:///nope", 5}, {}});
        REQUIRE(!s);
        CHECK_THAT(s.message(), Catch::Contains("file:///nope") && Catch::Contains("not open"));
    }
    SECTION("too many documents") {
        REQUIRE(open("file:///b", ""));
        auto s = open("file:///c", "");
        REQUIRE(!s);
        CHECK_THAT(s.message(), Catch::Contains("2 documents are open"));
        CHECK(!store.find("file:///c"));
        REQUIRE(store.close(did_close_params{{"file:///b"}}));
        CHECK(open("file:///c", ""));
    }
    SECTION("too large on open, and grown too large by a change") {
        CHECK(!open("file:///big", std::string(17, 'x')));
        auto s = store.change(did_change_params{{"file:///a", 3}, {{range{{0, 0}, {0, 0}}, std::string(11, 'x')}}});
        REQUIRE(!s);
        CHECK_THAT(s.message(), Catch::Contains("closed"));
        CHECK(!store.find("file:///a"));
    }
    SECTION("save with text replaces it; close of an unknown uri is reported") {
        REQUIRE(store.save(did_save_params{{"file:///a"}, std::string("saved")}));
        CHECK(store.find("file:///a")->text() == "saved");
        CHECK(!store.close(did_close_params{{"file:///zzz"}}));
    }
}
