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
          "<|file_sep|>updated/src/app.py\n");
    CHECK(next_edit_end_texts(next_edit_family::sweep) == std::vector<std::string>{"<|file_sep|>", "<|endoftext|>"});
}

TEST_CASE("next-edit format: the instruct layout, hunks, the marked window and the opened fence", "[inference][next_edit]") {
    auto p = build_next_edit_prompt(next_edit_family::instruct, chat_format::chatml, renamed_input());
    REQUIRE(p.has_value());
    CHECK(p->starts_with("<|im_start|>user\nMy recent edits to src/app.py, oldest first:\n```diff\n"
                         "@@ -5,1 +5,1 @@\n-count = 0\n+total = 0\n```\n\n"));
    CHECK(p->find("```python\ntotal = 0\nfor x in xs:\n    <|cursor|>count += x\n```\n") != std::string::npos);
    CHECK(p->ends_with("<|im_end|>\n<|im_start|>assistant\n```python\n"));
    CHECK(next_edit_stop_strings(next_edit_family::instruct) == std::vector<std::string>{"```"});
    CHECK_FALSE(build_next_edit_prompt(next_edit_family::instruct, std::nullopt, renamed_input()).has_value());
    CHECK_FALSE(build_next_edit_prompt(next_edit_family::none, chat_format::chatml, renamed_input()).has_value());
}

TEST_CASE("next-edit format: reading the rewritten window back", "[inference][next_edit]") {
    const std::string window = "a = 1\nb = a\n";
    CHECK(*parse_next_edit_output(next_edit_family::instruct, "a = 1\nb = a\n", true, window) == window);
    CHECK(*parse_next_edit_output(next_edit_family::sweep, "a = 1\nb = a", true, window) == window);   // newline restored
    CHECK(*parse_next_edit_output(next_edit_family::instruct, "a = 1\n<|cursor|>b = a\n", true, window) == window);
    CHECK_FALSE(parse_next_edit_output(next_edit_family::instruct, "a = 1\n", false, window).has_value());   // cut short
    CHECK_FALSE(parse_next_edit_output(next_edit_family::instruct, "x\n```python\ny\n", true, window).has_value());
    CHECK(*parse_next_edit_output(next_edit_family::sweep, "a = 1\nb = a\n", true, "a = 1\nb = a") == "a = 1\nb = a");
}
