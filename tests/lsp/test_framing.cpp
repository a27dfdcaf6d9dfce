#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "lsp/framing.h"

using namespace hearth::lsp;

namespace {

std::vector<frame_item> feed_all(frame_reader & r, std::string_view bytes) {
    std::vector<frame_item> out;
    r.feed(bytes, out);
    return out;
}

std::vector<std::string> bodies_of(const std::vector<frame_item> & items) {
    std::vector<std::string> out;
    for (const auto & i : items) {
        REQUIRE(std::holds_alternative<std::string>(i));
        out.push_back(std::get<std::string>(i));
    }
    return out;
}

const framing_error & only_error(const std::vector<frame_item> & items) {
    REQUIRE(items.size() == 1);
    REQUIRE(std::holds_alternative<framing_error>(items[0]));
    return std::get<framing_error>(items[0]);
}

}  // namespace

TEST_CASE("framing: one message, and several in one chunk", "[lsp][framing]") {
    frame_reader r;
    auto items = feed_all(r, frame_message(R"({"a":1})"));
    CHECK(bodies_of(items) == std::vector<std::string>{R"({"a":1})"});
    CHECK(r.idle());

    const std::string three = frame_message("x") + frame_message("") + frame_message("{\"é\":\"€😀\"}");
    items = feed_all(r, three);
    CHECK(bodies_of(items) == std::vector<std::string>{"x", "", "{\"é\":\"€😀\"}"});
    CHECK(r.idle());
}

TEST_CASE("framing: every split of a stream gives the same bodies", "[lsp][framing]") {
    const std::vector<std::string> want = {R"({"jsonrpc":"2.0","method":"initialized","params":{}})", "",
                                           std::string(1000, 'z'), "ünïcödé 😀"};
    std::string stream;
    for (const auto & b : want) stream += frame_message(b);
    stream.insert(0, "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n");   // on the first message

    SECTION("byte by byte") {
        frame_reader r;
        std::vector<frame_item> out;
        for (char c : stream) r.feed(std::string_view(&c, 1), out);
        CHECK(bodies_of(out) == want);
    }
    SECTION("every two-way split") {
        for (size_t cut = 0; cut <= stream.size(); ++cut) {
            frame_reader r;
            std::vector<frame_item> out;
            r.feed(std::string_view(stream).substr(0, cut), out);
            r.feed(std::string_view(stream).substr(cut), out);
            INFO("cut at " << cut);
            REQUIRE(bodies_of(out) == want);
        }
    }
    SECTION("random chunk sizes") {
        std::mt19937 rng(42);
        for (int trial = 0; trial < 50; ++trial) {
            frame_reader r;
            std::vector<frame_item> out;
            size_t pos = 0;
            while (pos < stream.size()) {
                const size_t n = std::uniform_int_distribution<size_t>(0, 64)(rng);
                r.feed(std::string_view(stream).substr(pos, n), out);
                pos += std::min(n, stream.size() - pos);
            }
            REQUIRE(bodies_of(out) == want);
        }
    }
}

TEST_CASE("framing: header names are case-insensitive, values may have spaces", "[lsp][framing]") {
    frame_reader r;
    auto items = feed_all(r, "content-length:   3  \r\nCONTENT-TYPE: application/vscode-jsonrpc; charset=\"UTF8\"\r\n\r\nabc");
    CHECK(bodies_of(items) == std::vector<std::string>{"abc"});
}

TEST_CASE("framing: fatal errors", "[lsp][framing]") {
    struct fatal_case {
        const char * name;
        std::string bytes;
        framing_errc code;
    };
    const std::vector<fatal_case> cases = {
        {"HTTP POST from a browser", "POST / HTTP/1.1\r\nHost: 127.0.0.1:7000\r\nContent-Length: 2\r\n\r\n{}",
         framing_errc::http_request},
        {"HTTP GET with bare LF", "GET /index.html HTTP/1.0\n\n", framing_errc::http_request},
        {"Host header", "Host: localhost\r\nContent-Length: 2\r\n\r\n{}", framing_errc::unknown_header},
        {"Origin header after Content-Length", "Content-Length: 2\r\nOrigin: http://evil.example\r\n\r\n{}",
         framing_errc::unknown_header},
        {"line without colon", "hello\r\n\r\n", framing_errc::unknown_header},
        {"empty header name", ": 5\r\n\r\n", framing_errc::unknown_header},
        {"bare LF line end", "Content-Length: 2\n\n{}", framing_errc::bad_line_end},
        {"missing Content-Length", "Content-Type: application/vscode-jsonrpc\r\n\r\n{}", framing_errc::missing_length},
        {"empty header section", "\r\n{}", framing_errc::missing_length},
        {"non-numeric length", "Content-Length: abc\r\n\r\n", framing_errc::bad_length},
        {"negative length", "Content-Length: -5\r\n\r\n", framing_errc::bad_length},
        {"length with sign", "Content-Length: +5\r\n\r\nhello", framing_errc::bad_length},
        {"empty length", "Content-Length:\r\n\r\n", framing_errc::bad_length},
        {"hex length", "Content-Length: 0x10\r\n\r\n", framing_errc::bad_length},
        {"overflowing length", "Content-Length: 99999999999999999999999\r\n\r\n", framing_errc::bad_length},
        {"repeated length", "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", framing_errc::bad_length},
        {"repeated type", "Content-Length: 2\r\nContent-Type: a\r\nContent-Type: a\r\n\r\n{}",
         framing_errc::unknown_header},
    };
    for (const auto & c : cases) {
        INFO(c.name);
        frame_reader r;
        auto items = feed_all(r, c.bytes);
        const auto & e = only_error(items);
        CHECK(e.code == c.code);
        CHECK(e.fatal());
        CHECK(!e.message.empty());
        CHECK(r.failed());
        // After a fatal error the stream position is unknown: later input is ignored.
        CHECK(feed_all(r, frame_message("{}")).empty());
    }
}

TEST_CASE("framing: an error message says what, where and what was expected", "[lsp][framing]") {
    frame_reader r;
    auto items = feed_all(r, frame_message("{}") + "Content-Length: 2\r\nX-Test: 1\r\n\r\n{}");
    REQUIRE(items.size() == 2);
    const auto & e = std::get<framing_error>(items[1]);
    CHECK(e.code == framing_errc::unknown_header);
    CHECK_THAT(e.message, Catch::Contains("'X-Test'") && Catch::Contains("byte 23") &&
                              Catch::Contains("only Content-Length and Content-Type"));
}

TEST_CASE("framing: header section too long", "[lsp][framing]") {
    frame_reader r(framing_limits{.max_body_bytes = 100, .max_header_bytes = 64});
    SECTION("one endless line, fed in small chunks") {
        std::vector<frame_item> out;
        for (int i = 0; i < 100 && out.empty(); ++i) r.feed("Content-Length: 000000", out);
        const auto & e = only_error(out);
        CHECK(e.code == framing_errc::header_too_long);
        CHECK(e.fatal());
    }
    SECTION("many short lines") {
        std::string h;
        for (int i = 0; i < 10; ++i) h += "Content-Type: a\r\n";
        auto items = feed_all(r, h);
        REQUIRE(!items.empty());
        CHECK(std::get<framing_error>(items.back()).fatal());
    }
    SECTION("exactly at the limit is accepted") {
        // "Content-Length: 2\r\n" (19) + padding header + "\r\n" (2) == 64
        std::string h = "Content-Length: 2\r\nContent-Type: " + std::string(64 - 19 - 2 - 16, 'a') + "\r\n\r\n{}";
        auto items = feed_all(r, h);
        CHECK(bodies_of(items) == std::vector<std::string>{"{}"});
    }
}

TEST_CASE("framing: a body over the limit is refused from its header and skipped", "[lsp][framing]") {
    frame_reader r(framing_limits{.max_body_bytes = 8, .max_header_bytes = 1024});
    std::vector<frame_item> out;
    r.feed("Content-Length: 9\r\n\r\n", out);   // refused before any body byte arrives
    REQUIRE(out.size() == 1);
    const auto & e = std::get<framing_error>(out[0]);
    CHECK(e.code == framing_errc::body_too_large);
    CHECK(!e.fatal());
    CHECK_THAT(e.message, Catch::Contains("9 bytes") && Catch::Contains("limit of 8"));
    out.clear();
    r.feed("123456789", out);   // skipped, not buffered
    r.feed(frame_message("12345678"), out);
    CHECK(bodies_of(out) == std::vector<std::string>{"12345678"});
    CHECK(!r.failed());
}

TEST_CASE("framing: a charset other than utf-8 skips the message", "[lsp][framing]") {
    frame_reader r;
    auto items = feed_all(r, "Content-Length: 2\r\nContent-Type: application/json; charset=latin1\r\n\r\n{}" +
                                 frame_message("ok"));
    REQUIRE(items.size() == 2);
    CHECK(std::get<framing_error>(items[0]).code == framing_errc::bad_content_type);
    CHECK(!std::get<framing_error>(items[0]).fatal());
    CHECK(std::get<std::string>(items[1]) == "ok");
}

TEST_CASE("framing: idle only between messages", "[lsp][framing]") {
    frame_reader r;
    std::vector<frame_item> out;
    CHECK(r.idle());
    r.feed("Content-", out);
    CHECK(!r.idle());
    r.feed("Length: 2\r\n\r\n{", out);
    CHECK(!r.idle());
    r.feed("}", out);
    CHECK(r.idle());
    CHECK(bodies_of(out) == std::vector<std::string>{"{}"});
}

TEST_CASE("framing: frame_message counts bytes, not characters", "[lsp][framing]") {
    CHECK(frame_message("é") == "Content-Length: 2\r\n\r\né");
    CHECK(frame_message("") == "Content-Length: 0\r\n\r\n");
}
