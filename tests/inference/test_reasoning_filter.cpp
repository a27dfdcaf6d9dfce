// The reasoning block of a chat answer, hidden or folded, the same whether the answer comes
// whole or in pieces split anywhere (a tag cut in two, or sharing a piece with text).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "inference/prompt/reasoning_filter.h"

using namespace hearth::inference;

namespace {

// The answer streamed in pieces cut at `cuts` (ascending offsets).
std::string streamed(std::string_view answer, const std::vector<size_t> & cuts, reasoning_display d, bool opened) {
    reasoning_filter f(d, opened);
    std::string out;
    size_t at = 0;
    for (const size_t c : cuts) {
        out += f.push(answer.substr(at, c - at));
        at = c;
    }
    out += f.push(answer.substr(at));
    out += f.finish();
    CHECK(out == f.shown());
    return out;
}

// Every split into two and three pieces, and one byte per piece, give `want`.
void check_every_split(std::string_view answer, reasoning_display d, bool opened, const std::string & want) {
    INFO("answer: " << std::string(answer));
    CHECK(filter_reasoning(answer, d, opened) == want);
    for (size_t i = 0; i <= answer.size(); ++i) {
        CHECK(streamed(answer, {i}, d, opened) == want);
        for (size_t j = i; j <= answer.size(); j += 3) CHECK(streamed(answer, {i, j}, d, opened) == want);
    }
    std::vector<size_t> bytes;
    for (size_t i = 1; i < answer.size(); ++i) bytes.push_back(i);
    CHECK(streamed(answer, bytes, d, opened) == want);
}

}  // namespace

TEST_CASE("reasoning: hidden by default, whatever the pieces", "[inference][chat][reasoning]") {
    // deepseek-r1's prompt opened the block: the answer starts inside it.
    check_every_split("Two and two.\nSo 4.\n</think>\n\nThe answer is 4.", reasoning_display::hidden, true,
                      "The answer is 4.");
    // A model that writes the opening tag itself (after blank space).
    check_every_split("\n<think>\nTwo and two.\n</think>\n\nThe answer is 4.", reasoning_display::hidden, false,
                      "The answer is 4.");
    // An empty block.
    check_every_split("<think></think>4", reasoning_display::hidden, false, "4");
}

TEST_CASE("reasoning: folded into a collapsed markdown block", "[inference][chat][reasoning]") {
    check_every_split("Two and two.\n</think>\n\nThe answer is 4.", reasoning_display::folded, true,
                      "<details><summary>Reasoning</summary>\n\nTwo and two.\n\n\n</details>\n\nThe answer is 4.");
    check_every_split("<think>Hm.</think>4", reasoning_display::folded, false,
                      "<details><summary>Reasoning</summary>\n\nHm.\n\n</details>\n\n4");
}

TEST_CASE("reasoning: an answer without a block passes unchanged", "[inference][chat][reasoning]") {
    for (const auto d : {reasoning_display::hidden, reasoning_display::folded}) {
        check_every_split("The answer is 4.", d, false, "The answer is 4.");
        check_every_split("  \n<b>4</b>", d, false, "  \n<b>4</b>");
        // "<think>" is the answer's own text once the answer has begun...
        check_every_split("Use <think> tags.</think> x", d, false, "Use <think> tags.</think> x");
        // ...and an unfinished tag at the end is text, not a block.
        check_every_split("  <thin", d, false, "  <thin");
        check_every_split("", d, false, "");
    }
}

TEST_CASE("reasoning: an answer cut off while reasoning", "[inference][chat][reasoning]") {
    check_every_split("Two and two make", reasoning_display::hidden, true, "");
    check_every_split("Two and two </thi", reasoning_display::hidden, true, "");
    check_every_split("Two and two </thi", reasoning_display::folded, true,
                      "<details><summary>Reasoning</summary>\n\nTwo and two </thi\n\n</details>\n\n");
    // The blank lines after the block never show, even when nothing follows them.
    check_every_split("x</think>\n\n", reasoning_display::hidden, true, "");
}

TEST_CASE("reasoning: the chat format says whether the prompt opened the block", "[inference][chat][reasoning]") {
    reasoning_filter r1(reasoning_display::hidden, chat_format::deepseek_r1);
    CHECK(r1.push("thinking</think>\n4").empty() == false);
    CHECK(r1.shown() == "4");
    reasoning_filter chatml(reasoning_display::hidden, chat_format::chatml);
    CHECK(chatml.push("thinking</think>\n4") == "thinking</think>\n4");
    // Streaming holds back only what could still be a tag.
    reasoning_filter s(reasoning_display::hidden, false);
    CHECK(s.push("<th").empty());
    CHECK(s.push("ink>a</th").empty());
    CHECK(s.push("ink> b").empty() == false);
    CHECK(s.shown() == "b");
}
