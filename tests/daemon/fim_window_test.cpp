#include <string>

#include <catch2/catch.hpp>

#include "daemon/pipeline/fim_window.h"

using namespace hearth::daemon;

namespace {
// The cursor is where '|' is; returns the text without it and the cursor's byte offset.
std::pair<std::string, size_t> at_bar(std::string s) {
    const size_t p = s.find('|');
    REQUIRE(p != std::string::npos);
    s.erase(p, 1);
    return {s, p};
}
}  // namespace

TEST_CASE("FIM window is cut in whole lines around the cursor", "[daemon][fim]") {
    auto [text, cur] = at_bar("l0\nl1\nl2\nl3 a|b\nl4\nl5\nl6\n");
    auto w = cut_fim_window(text, cur, 2, 1, window_edges::exact);
    CHECK(w.prefix == "l1\nl2\nl3 a");
    CHECK(w.suffix == "b\nl4\n");
    auto all = cut_fim_window(text, cur, 100, 100, window_edges::exact);
    CHECK(all.prefix + all.suffix == text);
    auto none = cut_fim_window(text, cur, 0, 0, window_edges::exact);
    CHECK(none.prefix == "l3 a");
    CHECK(none.suffix == "b\n");
}

TEST_CASE("FIM window edges: on a line grid the head stays put as the cursor moves; exact edges move with it", "[daemon][fim]") {
    std::string text;
    for (int i = 0; i < 40; ++i) text += "l" + std::to_string(i) + "\n";
    const auto cursor_at_line = [&](int line) {
        size_t p = 0;
        for (int i = 0; i < line; ++i) p = text.find('\n', p) + 1;
        return p;
    };
    const auto first_line = [](const fim_window & w) { return w.prefix.substr(0, w.prefix.find('\n')); };
    const auto last_line = [](const fim_window & w) {
        const std::string s = w.suffix.substr(0, w.suffix.size() - 1);
        return s.substr(s.rfind('\n') + 1);
    };
    // 8 lines before, 4 after: the grid's steps are 4 and 2 lines.
    for (int line : {20, 21, 22, 23}) {
        const auto g = cut_fim_window(text, cursor_at_line(line), 8, 4, window_edges::grid);
        CHECK(first_line(g) == "l12");
        const auto e = cut_fim_window(text, cursor_at_line(line), 8, 4, window_edges::exact);
        CHECK(first_line(e) == "l" + std::to_string(line - 8));
        CHECK(last_line(e) == "l" + std::to_string(line + 4));
    }
    CHECK(last_line(cut_fim_window(text, cursor_at_line(21), 8, 4, window_edges::grid)) == "l26");
    // At the document's start and end both take what there is.
    const auto top = cut_fim_window(text, cursor_at_line(3), 8, 4, window_edges::exact);
    CHECK(first_line(top) == "l0");
    const auto bottom = cut_fim_window(text, cursor_at_line(38), 8, 4, window_edges::exact);
    CHECK(bottom.suffix == "l38\nl39\n");
}

TEST_CASE("FIM window keeps multi-byte text intact and handles the edges", "[daemon][fim]") {
    auto [text, cur] = at_bar("// héllo wörld 🙂\nint x = |;");
    auto w = cut_fim_window(text, cur, 5, 5, window_edges::exact);
    CHECK(w.prefix == "// héllo wörld 🙂\nint x = ");
    CHECK(w.suffix == ";");
    auto start = cut_fim_window("abc", 0, 3, 3, window_edges::exact);
    CHECK(start.prefix.empty());
    CHECK(start.suffix == "abc");
    auto past = cut_fim_window("abc", 99, 3, 3, window_edges::exact);
    CHECK(past.prefix == "abc");
    CHECK(past.suffix.empty());
}

TEST_CASE("completion mode from the cursor's context", "[daemon][fim]") {
    struct c {
        const char * text;
        completion_mode want;
    };
    const c cases[] = {
        {"int f() {|", completion_mode::multi_line},
        {"int f() {|}", completion_mode::multi_line},
        {"def f(x):|", completion_mode::multi_line},
        {"call(|)", completion_mode::multi_line},
        {"int x = 1|", completion_mode::single_line},
        {"foo(a, |b)", completion_mode::single_line},
        {"if (x) {\n    |\n}", completion_mode::multi_line},
        {"if (x) {\n|\n}", completion_mode::multi_line},
        {"int a;\n|", completion_mode::single_line},
        {"", completion_mode::single_line},
        {"x = [\n\n|", completion_mode::multi_line},
    };
    for (const auto & k : cases) {
        INFO(k.text);
        std::string s = k.text;
        if (s.find('|') == std::string::npos) s += '|';
        auto [text, cur] = at_bar(s);
        CHECK(detect_mode(text, cur) == k.want);
    }
}

TEST_CASE("trim_completion drops what the suffix already has", "[daemon][fim]") {
    using m = completion_mode;
    CHECK(trim_completion("bar(1, 2))", "x = foo(", ")", m::single_line) == "bar(1, 2)");
    CHECK(trim_completion("x + 1;", "int y = ", ";", m::single_line) == "x + 1");
    CHECK(trim_completion("abc\ndef", "x = ", "", m::single_line) == "abc");
    CHECK(trim_completion("abc   ", "x = ", "", m::single_line) == "abc");
    CHECK(trim_completion(")", "f(", ")", m::single_line).empty());
    CHECK(trim_completion("value", "x = ", "", m::single_line) == "value");
    // multi-line: stops before the line that the suffix already holds
    CHECK(trim_completion("\n    return 1;\n}\nint g() {", "int f() {", "\n}\n", m::multi_line) == "\n    return 1;");
    CHECK(trim_completion("\n    a();\n    b();\n", "  if (x) {", "\n\n  }  \n", m::multi_line) == "\n    a();\n    b();");
    CHECK(trim_completion("\n    a();", "if (x) {", "", m::multi_line) == "\n    a();");
    // the first line is never dropped for equalling the next line: it is what is new
    CHECK(trim_completion("}", "    ", "\n}\n", m::multi_line) == "}");
}

TEST_CASE("a whole line completed before existing text keeps its newline", "[daemon][fim]") {
    using m = completion_mode;
    // The cursor at the start of `    return False`: the model wrote a line and ended it.
    CHECK(trim_completion("        return True\n", "def f():\n", "    return False\n", m::single_line) ==
          "        return True\n");
    // The cursor after the indentation: the indentation goes after the newline, so the
    // existing line keeps it (accepting leaves `    return True\n    return False`).
    CHECK(trim_completion("return True\n", "def f():\n    ", "return False\n", m::single_line) == "return True\n    ");
    // The model stopped without ending the line: nothing says it is a line of its own.
    CHECK(trim_completion("x = 1", "def f():\n", "    return x\n", m::single_line) == "x = 1");
    // Mid-line, or at the end of a line, the newline is never part of it.
    CHECK(trim_completion("1, 2)\n", "f(", ")\n", m::single_line) == "1, 2");
    CHECK(trim_completion("return x\n", "    ", "\n", m::single_line) == "return x");
    // Before a closing bracket on the cursor line: the model's line ends before it (the
    // stop rule cut the dedented `}`), or the model wrote the `}` again at its own place.
    CHECK(trim_completion("return 1;\n", "int f() {\n    ", "}\n", m::multi_line) == "return 1;\n    ");
    CHECK(trim_completion("return 1;\n}", "int f() {\n    ", "}\n", m::multi_line) == "return 1;\n");
    // The bracket the model closed on a line of its own stays on a line of its own.
    CHECK(trim_completion("\n    return 1;\n}", "int f() {", "}\n", m::multi_line) == "\n    return 1;\n");
}

TEST_CASE("an answer that starts on the next line is kept where the line has room for it", "[daemon][fim]") {
    using m = completion_mode;
    // At the end of a line: the model ended it and wrote the next one.
    CHECK(trim_completion("\n    return x\n", "def f(x):\n    y = x", "\n", m::single_line) == "\n    return x");
    // Blank lines before it are part of it.
    CHECK(trim_completion("\n\n    return x\n", "    y = x", "\n", m::single_line) == "\n\n    return x");
    // Mid-line a newline would split the line: only the text before it counts.
    CHECK(trim_completion("\n    return x\n", "    y = f(", "x)\n", m::single_line).empty());
}

TEST_CASE("a Markdown fence ends the answer in code that has none", "[daemon][fim]") {
    using m = completion_mode;
    using f = cleanup_filter;
    // An instruct model that thinks it is in a chat closes its code block: on an empty line
    // the fence would be inserted as code (traceback.py's `return value, tb` hole).
    const std::string py = "def f(value, tb):\n    tb = tb or None\n    ";
    CHECK(trim_completion("\n```", py, "\n", m::single_line).empty());
    CHECK(clean_completion("\n```", py, "\n", m::single_line).cut == f::fence);
    // What came before the fence stays.
    CHECK(trim_completion("return value, tb\n```\n", py, "\n", m::multi_line) == "return value, tb");
    CHECK(trim_completion("x = 1\n    ```python", py, "\n", m::multi_line) == "x = 1");
    // Where the document itself has fences (Markdown, a docstring with an example), a fence is text.
    const std::string md = "Example:\n\n```python\nprint(1)\n";
    CHECK(trim_completion("```", md, "\n", m::single_line) == "```");
}

TEST_CASE("the suffix overlap is trimmed only where it is real", "[daemon][fim]") {
    using m = completion_mode;
    // Never inside an identifier: `Fals|e` is not the `e` of `else`, `an|s` not the `s` of `strong`.
    CHECK(trim_completion("        return False", "def f():\n", "    else:\n", m::single_line) == "        return False");
    CHECK(trim_completion("return ans", "    ", "strong = 1\n", m::single_line) == "return ans");
    // A bracket the completion opens and closes itself is not the editor's.
    CHECK(trim_completion("foo()", "x = (", ")\n", m::single_line) == "foo()");
    CHECK(trim_completion("g(x)", "f(", ")\n", m::single_line) == "g(x)");
    // Real overlaps: closers the completion has no opener for, whole tokens, the whole rest.
    CHECK(trim_completion("bar(1, 2))", "x = foo(", ")", m::single_line) == "bar(1, 2)");
    CHECK(trim_completion("x, y):", "def f(", "):\n", m::single_line) == "x, y");
    CHECK(trim_completion("total = a + b  # sum", "    ", "# sum\n", m::single_line) == "total = a + b");
    CHECK(trim_completion("value)", "f(", "value)\n", m::single_line).empty());
    // A word overlap shorter than the minimum is a coincidence unless it is the whole rest.
    CHECK(trim_completion("for i", "    ", "i in range(n):\n", m::single_line) == "for i");
    // A whole line written before the line's text does not touch it: the text goes to the next
    // line, so the end of the line written is not a repeat of its start (asynchat.py's
    // `result = self.data` before `self.data = b''` came back `result =`). A line that repeats
    // the existing one whole is still nothing new.
    const std::string at_text = "        else:\n            ";
    CHECK(trim_completion("result = self.data\n", at_text, "self.data = b''\n", m::single_line) ==
          "result = self.data\n            ");
    CHECK(trim_completion("self.data = b''\n", at_text, "self.data = b''\n", m::single_line).empty());
}

TEST_CASE("the cleanup says which filter cut an answer", "[daemon][fim]") {
    using m = completion_mode;
    using f = cleanup_filter;
    CHECK(clean_completion("x = 1\ny = 2", "", "\n", m::single_line).cut == f::after_line);
    CHECK(clean_completion("x = 1\n", "", "\n", m::single_line).cut == f::none);
    CHECK(clean_completion("\n    b()\n", "    a(", "x)\n", m::single_line).cut == f::mid_line_newline);
    CHECK(clean_completion("\n    a();\n    done();", "  if (x) {", "\n    done();\n", m::multi_line).cut == f::suffix_line);
    const auto emptied = clean_completion("value)", "f(", "value)\n", m::single_line);
    CHECK(emptied.text.empty());
    CHECK(emptied.cut == f::overlap);
    CHECK(clean_completion("  \n ", "x = ", "\n", m::single_line).cut == f::blank);
}

// After `nam` typed at the end of a line, the model's `\n    else:` was shown glued to it
// (`nam    else:`): an answer that only starts a new line after a line's first, half-typed
// word is no suggestion. After a statement, a line below keeps its newline.
TEST_CASE("a new line after a half-typed word is dropped, never glued to it", "[daemon][fim]") {
    using m = completion_mode;
    const std::string head = "    def close(self):\n        nam";
    const auto after_word = clean_completion("\n    else:", head, "\n        return 1\n", m::single_line);
    CHECK(after_word.text.empty());
    CHECK(after_word.cut == cleanup_filter::new_line_after_word);
    CHECK(clean_completion("\n        y = 2", "        x = f(a)", "\n", m::single_line).text == "\n        y = 2");
    CHECK(clean_completion("e = 1", head, "\n", m::single_line).text == "e = 1");
}
