#include <catch2/catch.hpp>

#include "inference/decode/generate.h"

using namespace hearth::inference;

TEST_CASE("generate: where a finished line ends, for a budget that interrupted one", "[inference][generate]") {
    constexpr size_t none = std::string_view::npos;
    CHECK(finished_line_end("x = 1\ny", 0) == 6);
    CHECK(finished_line_end("x = 1", 0) == none);
    // leading newlines and indentation are no line yet
    CHECK(finished_line_end("\n\n    ", 0) == none);
    CHECK(finished_line_end("\n    foo()\n", 0) == 11);
    // only newlines at or after `from` count
    CHECK(finished_line_end("a\nb = 2\nc", 2) == 8);
    CHECK(finished_line_end("a\nb = 2", 2) == none);
}
