#include <catch2/catch.hpp>

#include <string>

#include "daemon/pipeline/window_diff.h"

using namespace hearth::daemon;

namespace {

// The edits applied to the original, last first so earlier offsets stay valid.
std::string apply_edits(std::string text, const std::vector<window_edit> & edits) {
    for (auto it = edits.rbegin(); it != edits.rend(); ++it) text.replace(it->begin, it->end - it->begin, it->text);
    return text;
}

}  // namespace

TEST_CASE("window diff: no change gives no edit", "[daemon][window_diff]") {
    CHECK(diff_window("a = 1\nb = 2\n", "a = 1\nb = 2\n").empty());
    CHECK(diff_window("", "").empty());
}

TEST_CASE("window diff: a rename gives just the identifier's range", "[daemon][window_diff]") {
    const std::string a = "total = 0\nfor x in xs:\n    count += x\nprint(count)\n";
    const std::string b = "total = 0\nfor x in xs:\n    total += x\nprint(total)\n";
    const auto edits = diff_window(a, b);
    REQUIRE(edits.size() == 2);
    CHECK(edits[0] == window_edit{a.find("count"), a.find("count") + 5, "total"});
    CHECK(edits[1] == window_edit{a.rfind("count"), a.rfind("count") + 5, "total"});
    CHECK(apply_edits(a, edits) == b);
}

TEST_CASE("window diff: inserted and deleted lines", "[daemon][window_diff]") {
    const std::string a = "def f(a):\n    return a\n";
    SECTION("insertion") {
        const std::string b = "def f(a):\n    a += 1\n    return a\n";
        const auto edits = diff_window(a, b);
        REQUIRE(edits.size() == 1);
        CHECK(edits[0].begin == edits[0].end);   // a pure insertion
        CHECK(apply_edits(a, edits) == b);
    }
    SECTION("deletion") {
        const std::string b = "def f(a):\n";
        const auto edits = diff_window(a, b);
        REQUIRE(edits.size() == 1);
        CHECK(edits[0].text.empty());
        CHECK(edits[0] == window_edit{10, a.size(), ""});
        CHECK(apply_edits(a, edits) == b);
    }
    SECTION("an argument added to a call, the lines around kept") {
        const std::string c = "x = 1\ny = f(x)\nz = 3\n";
        const std::string d = "x = 1\ny = f(x, y)\nz = 3\n";
        const auto edits = diff_window(c, d);
        REQUIRE(edits.size() == 1);
        CHECK(edits[0] == window_edit{c.find(')'), c.find(')'), ", y"});
    }
    SECTION("the last line without a line end") {
        const auto edits = diff_window("a\nb", "a\nb\nc");
        CHECK(apply_edits("a\nb", edits) == "a\nb\nc");
    }
}

TEST_CASE("window diff: a rewrite in LF over CRLF lines changes no line end", "[daemon][window_diff]") {
    const std::string a = "count = 0\r\nprint(count)\r\n";
    const auto edits = diff_window(a, "count = 0\nprint(total)\n");
    REQUIRE(edits.size() == 1);
    CHECK(edits[0] == window_edit{a.rfind("count"), a.rfind("count") + 5, "total"});
    CHECK(diff_window(a, "count = 0\nprint(count)\n").empty());
    CHECK(with_line_ends_of("x\n", "a\nb\n") == "a\nb\n");
}

TEST_CASE("window diff: non-ASCII text is cut on character boundaries", "[daemon][window_diff]") {
    // α (CE B1) and β (CE B2) share their first byte; the edit still takes the whole character.
    const std::string a = "größe = 1\nlet α = größe\n";
    const std::string b = "größe = 1\nlet β = größe\n";
    const auto edits = diff_window(a, b);
    REQUIRE(edits.size() == 1);
    CHECK(edits[0].text == "β");
    CHECK(a.substr(edits[0].begin, edits[0].end - edits[0].begin) == "α");
    const std::string c = "名前 = 1\n", d = "名字 = 1\n";   // 前 and 字 share no byte; 名 kept
    const auto e2 = diff_window(c, d);
    REQUIRE(e2.size() == 1);
    CHECK(e2[0].text == "字");
    CHECK(apply_edits(c, e2) == d);
}
