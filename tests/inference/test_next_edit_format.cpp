#include <catch2/catch.hpp>

#include <string>

#include "inference/prompt/next_edit_format.h"

using namespace hearth::inference;

namespace {

next_edit_input renamed_input() {
    next_edit_input in;
    in.path = "src/app.py";
    in.language_id = "python";
    in.context = "import sys\n";
    in.edits = {{4, "count = 0\n", "total = 0\n"}};
    in.window_before = "count = 0\nfor x in xs:\n    count += x\n";
    in.window = "total = 0\nfor x in xs:\n    count += x\n";
    in.cursor = in.window.find("count");
    return in;
}

}  // namespace

TEST_CASE("next-edit format: chosen from the model's name, else its chat format", "[inference][next_edit]") {
    CHECK(choose_next_edit_format("sweep-next-edit-1.5B", "", true, true).family == next_edit_family::sweep);
    CHECK(choose_next_edit_format("Model", "Sweep_Next_Edit", true, false).family == next_edit_family::sweep);
    // A next-edit name over a vocabulary without Qwen's file separator cannot be Sweep's layout.
    CHECK(choose_next_edit_format("sweep-next-edit", "", false, true).family == next_edit_family::instruct);
    CHECK(choose_next_edit_format("qwen2.5-coder-1.5b-instruct", "qwen2.5-coder", true, true).family ==
          next_edit_family::instruct);
    CHECK(choose_next_edit_format("tiny", "", false, false).family == next_edit_family::none);
}

TEST_CASE("next-edit format: Sweep's layout, original/current/updated after the diffs", "[inference][next_edit]") {
    auto p = build_next_edit_prompt(next_edit_family::sweep, std::nullopt, renamed_input());
    REQUIRE(p.has_value());
    CHECK(*p ==
          "<|file_sep|>src/app.py\nimport sys\n"
          "<|file_sep|>src/app.py.diff\noriginal:\ncount = 0\nupdated:\ntotal = 0\n"
          "<|file_sep|>original/src/app.py\ncount = 0\nfor x in xs:\n    count += x\n"
          "<|file_sep|>current/src/app.py\ntotal = 0\nfor x in xs:\n    count += x\n"
          "<|file_sep|>updated/src/app.py\ntotal = 0\nfor x in xs:\n");   // the lines above the cursor's, given
    CHECK(next_edit_end_texts(next_edit_family::sweep) == std::vector<std::string>{"<|file_sep|>", "<|endoftext|>"});
}

TEST_CASE("next-edit format: the instruct layout, hunks, the marked window and the opened fence", "[inference][next_edit]") {
    auto p = build_next_edit_prompt(next_edit_family::instruct, chat_format::chatml, renamed_input());
    REQUIRE(p.has_value());
    CHECK(p->starts_with("<|im_start|>user\nMy recent edits to src/app.py, oldest first:\n```diff\n"
                         "@@ -5,1 +5,1 @@\n-count = 0\n+total = 0\n```\n\n"));
    CHECK(p->find("```python\ntotal = 0\nfor x in xs:\n    <|cursor|>count += x\n```\n") != std::string::npos);
    CHECK(p->ends_with("<|im_end|>\n<|im_start|>assistant\n```python\ntotal = 0\nfor x in xs:\n"));
    CHECK(next_edit_stop_strings(next_edit_family::instruct) == std::vector<std::string>{"```"});
    CHECK_FALSE(build_next_edit_prompt(next_edit_family::instruct, std::nullopt, renamed_input()).has_value());
    CHECK_FALSE(build_next_edit_prompt(next_edit_family::none, chat_format::chatml, renamed_input()).has_value());
}

TEST_CASE("next-edit format: reading the rewritten window back", "[inference][next_edit]") {
    next_edit_input in;
    in.window = "a = 1\nb = a\n";
    const auto parse = [&](std::string_view text, bool complete, next_edit_family f = next_edit_family::instruct) {
        return parse_next_edit_output(f, text, complete, in);
    };
    CHECK(*parse("a = 1\nb = a\n", true) == in.window);
    CHECK(*parse("a = 1\nb = a", true, next_edit_family::sweep) == in.window);   // newline restored
    CHECK(*parse("a = 1\n<|cursor|>b = a\n", true) == in.window);
    CHECK_FALSE(parse("a = 1\n", false).has_value());   // cut short
    CHECK_FALSE(parse("x\n```python\ny\n", true).has_value());
    in.window = "a = 1\nb = a";
    CHECK(*parse("a = 1\nb = a\n", true, next_edit_family::sweep) == "a = 1\nb = a");
    // After the prefill (the lines above the cursor's), the model's text goes on.
    in.window = "a = 1\nb = a\n";
    in.cursor = in.window.find('b');
    CHECK(next_edit_prefill(in) == "a = 1\n");
    CHECK(*parse("b = a + 1\n", true) == "a = 1\nb = a + 1\n");
}

TEST_CASE("next-edit format: a rewrite stops once it has changed a line and copied two again", "[inference][next_edit]") {
    const std::string window = "def f(x):\n    count = 0\n    count += x\n    y = 2\n    return count\n    pass\n";
    CHECK_FALSE(find_next_edit_resync(window, "def f(x):\n    count = 0\n").has_value());   // nothing changed
    const std::string changed = "def f(x):\n    count = 0\n    total += x\n    y = 2\n";
    CHECK_FALSE(find_next_edit_resync(window, changed).has_value());                        // one line back only
    const auto r = find_next_edit_resync(window, changed + "    return count\n");
    REQUIRE(r.has_value());
    CHECK(r->text_end == changed.size() + 17);
    CHECK(window.substr(r->window_from) == "    pass\n");
    // An inserted line, then the window again from where it was left.
    const auto ins = find_next_edit_resync(window, "def f(x):\n    z = 0\n    count = 0\n    count += x\n");
    REQUIRE(ins.has_value());
    CHECK(window.substr(ins->window_from) == "    y = 2\n    return count\n    pass\n");
    // Blank lines alone are no proof of being back.
    CHECK_FALSE(find_next_edit_resync("a\n\n\nb\n", "x\n\n\n").has_value());
    // Read back, the rest of the window follows a rewrite that stopped there.
    next_edit_input in;
    in.window = window;
    in.cursor = window.find("    count +=");
    CHECK(*parse_next_edit_output(next_edit_family::instruct, "    total += x\n    y = 2\n    return count\n", true, in) ==
          "def f(x):\n    count = 0\n    total += x\n    y = 2\n    return count\n    pass\n");
}
