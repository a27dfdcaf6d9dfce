#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <boost/json/parse.hpp>

#include "lsp/chat_stream.h"
#include "lsp/utf8.h"

using namespace hearth::lsp;

namespace {

std::string hex(std::string_view s) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (char c : s) {
        out += digits[static_cast<unsigned char>(c) >> 4];
        out += digits[static_cast<unsigned char>(c) & 15];
    }
    return out;
}

std::string unhex(std::string_view h) {
    std::string out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) out += static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
    return out;
}

}  // namespace

TEST_CASE("utf8: validity and replacement of invalid bytes", "[lsp][utf8]") {
    CHECK(is_valid_utf8("plain é € 😀"));
    CHECK(!is_valid_utf8("\xff"));
    CHECK(!is_valid_utf8("\xc0\xaf"));           // overlong '/'
    CHECK(!is_valid_utf8("\xed\xa0\x80"));       // a UTF-16 surrogate
    CHECK(!is_valid_utf8("\xf4\x90\x80\x80"));   // past U+10FFFF
    CHECK(!is_valid_utf8("\xe2\x82"));           // cut off
    CHECK(to_valid_utf8("a\xffz") == "a\xef\xbf\xbdz");
    CHECK(to_valid_utf8("\xe2\x82z") == "\xef\xbf\xbdz");   // one U+FFFD for the maximal subpart
    CHECK(to_valid_utf8("\xed\xa0\x80") == "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

TEST_CASE("utf8: replacement matches Python's decoder (errors='replace')", "[lsp][utf8]") {
    std::mt19937 rng(7);
    const std::vector<std::string> bits = {"a", "é", "€", "😀", "\x80", "\xbf", "\xc0", "\xc2", "\xe0", "\xe0\xa0", "\xed",
                                           "\xed\xa0", "\xf0", "\xf0\x90", "\xf0\x90\x80", "\xf4\x90", "\xf5", "\xff"};
    std::vector<std::string> inputs;
    for (int i = 0; i < 300; ++i) {
        std::string s;
        const int n = std::uniform_int_distribution<int>(0, 8)(rng);
        for (int k = 0; k < n; ++k) s += bits[std::uniform_int_distribution<size_t>(0, bits.size() - 1)(rng)];
        inputs.push_back(s);
    }
    const auto dir = std::filesystem::temp_directory_path();
    const auto in_path = dir / ("hearth_utf8_in_" + std::to_string(::getpid()));
    const auto out_path = dir / ("hearth_utf8_out_" + std::to_string(::getpid()));
    {
        std::ofstream f(in_path);
        for (const auto & s : inputs) f << hex(s) << "\n";
    }
    const std::string cmd = std::string(HEARTH_PYTHON) + " -c \"import sys\nfor l in open(sys.argv[1]):\n"
                            "  print(bytes.fromhex(l.strip()).decode('utf-8', 'replace').encode('utf-8').hex())\" " +
                            in_path.string() + " > " + out_path.string();
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::ifstream f(out_path);
    std::string line;
    size_t i = 0;
    for (; std::getline(f, line) && i < inputs.size(); ++i) {
        INFO("input " << hex(inputs[i]));
        CHECK(hex(to_valid_utf8(inputs[i])) == line);
    }
    CHECK(i == inputs.size());
    std::filesystem::remove(in_path);
    std::filesystem::remove(out_path);
}

TEST_CASE("utf8: complete prefix never splits a character", "[lsp][utf8]") {
    CHECK(utf8_complete_prefix("ab") == 2);
    CHECK(utf8_complete_prefix("a\xf0\x9f\x98") == 1);
    CHECK(utf8_complete_prefix("a\xf0\x9f\x98\x80") == 5);
    CHECK(utf8_complete_prefix("a\xe2") == 1);
    CHECK(utf8_complete_prefix("a\xff") == 2);        // invalid, not unfinished: let it through
    CHECK(utf8_complete_prefix("\xe2\x82\xac\xc3") == 3);
}

TEST_CASE("chat_stream: a character split across pieces is sent whole", "[lsp][utf8]") {
    std::vector<std::string> sent;
    auto ch = std::make_shared<outgoing_channel>([&](std::string b) { sent.push_back(std::move(b)); });
    chat_params p;
    p.partialResultToken = boost::json::value(1);
    chat_stream s(notifier(ch), p);
    s.piece("a\xf0\x9f");   // 'a' + half of 😀
    s.piece("\x98");
    s.piece("\x80!");
    s.piece("\xe2\x82");    // a cut-off € at the very end
    s.end();
    REQUIRE(sent.size() == 3);
    auto text_of = [](const std::string & body) {
        return std::string(boost::json::parse(body).at("params").at("value").at("text").as_string());
    };
    CHECK(text_of(sent[0]) == "a");
    CHECK(text_of(sent[1]) == "😀!");
    CHECK(text_of(sent[2]) == "\xef\xbf\xbd");
    CHECK(s.text() == "a😀!\xe2\x82");
}
