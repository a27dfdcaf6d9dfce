#include <catch2/catch.hpp>

#include "inference/decode/completion_rules.h"

using namespace hearth::inference;

namespace {
std::string cut_by(const stop_rule & rule, const std::string & text) {
    const size_t cut = rule(text);
    return cut == std::string::npos ? text : text.substr(0, cut);
}
}  // namespace

TEST_CASE("single-line completions end at the line's end", "[inference][completion]") {
    auto rule = make_completion_rule(line_mode::single_line, "int x = ", ";\n");
    CHECK(rule("42") == std::string::npos);
    // the newline that ends the line is kept: it says the line is finished
    CHECK(cut_by(rule, "42;\nint y") == "42;\n");
    // a leading newline alone does not end it: the next line is the completion
    CHECK(rule("\n") == std::string::npos);
    // nor do blank lines: the first line with text on it is
    CHECK(rule("\n    \n") == std::string::npos);
    CHECK(cut_by(rule, "\n    \n    x = 1\ny") == "\n    \n    x = 1\n");
}

TEST_CASE("multi-line completions stay inside the block", "[inference][completion]") {
    const std::string prefix = "def f(x):\n";
    auto rule = make_completion_rule(line_mode::multi_line, prefix + "    ", "");
    CHECK(cut_by(rule, "return x + 1\n    \ndef g():\n") == "return x + 1\n    \n");
    // a block opened on the cursor's line ends with its closing bracket
    auto brace = make_completion_rule(line_mode::multi_line, "int f() {", "\n");
    CHECK(cut_by(brace, "\n    return 1;\n}\nint g() {\n") == "\n    return 1;\n}\n");
}

TEST_CASE("from a blank line, a multi-line completion ends where it leaves the block it started in", "[inference][completion]") {
    // The cursor at column 0 of an empty line inside a try block: the block the completion is in
    // is the one its first line is indented for, not column 0 (cgitb.py's `file.write(doc)` was
    // followed by a dedented `finally:` that closed the block).
    auto rule = make_completion_rule(line_mode::multi_line, "            try:\n", "\n            except OSError:\n");
    CHECK(cut_by(rule, "                    file.write(doc)\n            finally:\n") == "                    file.write(doc)\n");
    // Lines at the first line's depth and deeper stay, blank lines too.
    CHECK(cut_by(rule, "    x = 1\n\n    if x:\n        y()\ndef g():\n") == "    x = 1\n\n    if x:\n        y()\n");
    // A first line that is blank does not set the depth: the first line with text does.
    CHECK(cut_by(rule, "\n        a()\n        b()\n    c()\n") == "\n        a()\n        b()\n");
    // The indentation typed before the cursor counts as the first line's.
    auto typed = make_completion_rule(line_mode::multi_line, "def f():\n        ", "\n");
    CHECK(cut_by(typed, "a()\n        b()\n    c()\n") == "a()\n        b()\n");
}

TEST_CASE("multi-line completions stop before repeating the suffix", "[inference][completion]") {
    auto rule = make_completion_rule(line_mode::multi_line, "    ", "\n    return total;\n}\n");
    CHECK(cut_by(rule, "total += x;\n    return total;\n") == "total += x;\n");
}

TEST_CASE("the line mode follows the cursor's surroundings", "[inference][completion]") {
    CHECK(guess_line_mode("int f() {", "\n}") == line_mode::multi_line);
    CHECK(guess_line_mode("    ", "\n") == line_mode::multi_line);
    CHECK(guess_line_mode("x = foo(", "a, b)\n") == line_mode::single_line);
    CHECK(guess_line_mode("return ", "\n") == line_mode::single_line);
}

TEST_CASE("a line written at the start of a line is told apart from that line again", "[inference][completion]") {
    const std::string prefix = "def f(x):\n    y = x\n";
    const std::string suffix = "    return y\n";
    CHECK(repeats_cursor_line(prefix, suffix, "    return y\n"));
    CHECK(repeats_cursor_line(prefix, suffix, "return y"));           // the indentation does not matter
    CHECK(repeats_cursor_line(prefix, suffix, "\n    return y\n"));   // nor blank lines before it
    CHECK_FALSE(repeats_cursor_line(prefix, suffix, "    y += 1\n    return y\n"));
    CHECK_FALSE(repeats_cursor_line(prefix, suffix, "    return"));   // not finished: not the same line
    CHECK_FALSE(repeats_cursor_line(prefix, suffix, "   \n"));
    // Only at the start of a line that has text: mid-line or on an empty line nothing repeats.
    CHECK_FALSE(repeats_cursor_line(prefix + "    ret", "urn y\n", "urn y\n"));
    CHECK_FALSE(repeats_cursor_line(prefix, "\n    return y\n", "    return y\n"));
}
