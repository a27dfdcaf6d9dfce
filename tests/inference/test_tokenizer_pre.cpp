// Pre-tokenizer splits, checked against splits worked out by hand from the expressions
// (llama.cpp's custom qwen2 splitter gives the same): the qwen2 path is the default
// model's, and its vocabulary is not among the fixtures.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "inference/tokenizer/pre_tokenizer.h"

using namespace hearth::inference::tokenizer;

namespace {

std::vector<std::string> split(const pre_tokenizer & p, std::string_view text) {
    std::vector<std::string> out;
    size_t covered = 0;
    for (const auto s : p.split(text)) {
        CHECK(s.offset == covered);   // consecutive, non-empty, covering the text
        CHECK(s.length > 0);
        covered += s.length;
        out.emplace_back(text.substr(s.offset, s.length));
    }
    CHECK(covered == text.size());
    return out;
}

using words = std::vector<std::string>;

}  // namespace

TEST_CASE("pre-tokenizer: qwen2", "[inference][tokenizer]") {
    auto p = pre_tokenizer::create("qwen2");
    REQUIRE(p);
    CHECK(split(*p, "Hello world") == words{"Hello", " world"});
    CHECK(split(*p, "  Hello") == words{" ", " Hello"});
    CHECK(split(*p, "x = 123;\n") == words{"x", " =", " ", "1", "2", "3", ";\n"});
    CHECK(split(*p, "don't DON'T") == words{"don", "'t", " DON", "'T"});
    CHECK(split(*p, "if (a) {\n    return b;\n}\n") ==
          words{"if", " (", "a", ")", " {\n", "   ", " return", " b", ";\n", "}\n"});
    CHECK(split(*p, "a  \n\n b") == words{"a", "  \n\n", " b"});
    CHECK(split(*p, "trailing   ") == words{"trailing", "   "});
    CHECK(split(*p, "\xC3\x84pfel 3.14") == words{"\xC3\x84pfel", " ", "3", ".", "1", "4"});
    CHECK(split(*p, "").empty());
}

TEST_CASE("pre-tokenizer: invalid UTF-8 stays in the gaps", "[inference][tokenizer]") {
    auto p = pre_tokenizer::create("qwen2");
    REQUIRE(p);
    CHECK(split(*p, "a\xFF" "b") == words{"a", "\xFF", "b"});
    CHECK(split(*p, "\xE2\x96") == words{"\xE2\x96"});
    CHECK(split(*p, "x\xC0\xC1 y") == words{"x", "\xC0\xC1", " y"});
}

TEST_CASE("pre-tokenizer: gpt-2, llama3 and deepseek-coder", "[inference][tokenizer]") {
    auto gpt2 = pre_tokenizer::create("gpt-2");
    REQUIRE(gpt2);
    CHECK(split(*gpt2, "Hello  world's 2024!") == words{"Hello", " ", " world", "'s", " 2024", "!"});
    CHECK(split(*gpt2, "a\tb") == words{"a", "\t", "b"});

    auto llama3 = pre_tokenizer::create("llama-bpe");
    REQUIRE(llama3);
    CHECK(split(*llama3, "1234567 ab") == words{"123", "456", "7", " ab"});

    // Several expressions in sequence: newlines, letters, punctuation, CJK, then digits.
    auto ds = pre_tokenizer::create("deepseek-coder");
    REQUIRE(ds);
    CHECK(ds->expressions().size() == 5);
    CHECK(split(*ds, "ab 12\n") == words{"ab", " ", "1", "2", "\n"});
    CHECK(split(*ds, "f(x);") == words{"f", "(", "x", ");"});
}

TEST_CASE("pre-tokenizer: bad names and expressions are errors", "[inference][tokenizer]") {
    auto bad = pre_tokenizer::create("no-such-pre");
    REQUIRE(!bad);
    CHECK(bad.message().find("no-such-pre") != std::string::npos);
    auto broken = pre_tokenizer::from_expressions({"(unclosed"});
    REQUIRE(!broken);
    CHECK(broken.message().find("(unclosed") != std::string::npos);
}

TEST_CASE("pre-tokenizer: a long whitespace run does not exhaust the matcher", "[inference][tokenizer]") {
    auto p = pre_tokenizer::create("qwen2");
    REQUIRE(p);
    const std::string text = std::string(200000, ' ') + "x";
    const auto pieces = split(*p, text);
    REQUIRE(pieces.size() == 2);
    CHECK(pieces[0].size() == 199999);
    CHECK(pieces[1] == " x");
}
