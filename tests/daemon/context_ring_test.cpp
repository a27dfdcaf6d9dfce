// context_ring: pieces around a line, deduplicated by line similarity, bounded, never from
// the file being completed.
#include <catch2/catch.hpp>

#include "daemon/pipeline/context_ring.h"

using hearth::daemon::context_ring;

namespace {

std::string numbered(int from, int to) {   // "line from\n" ... "line to-1\n"
    std::string s;
    for (int i = from; i < to; ++i) s += "line " + std::to_string(i) + "\n";
    return s;
}

}  // namespace

TEST_CASE("context ring: a piece is the lines around the line, clipped to the file", "[daemon][context]") {
    context_ring r(4, 4);
    r.add("a", numbered(0, 100), 50);
    r.add("b", numbered(500, 503), 2);
    r.add("c", numbered(0, 100), 0);
    auto chunks = r.chunks_except("x");
    REQUIRE(chunks.size() == 3);
    CHECK(chunks[0].uri == "a");
    CHECK(chunks[0].text == numbered(48, 52));
    CHECK(chunks[1].text == numbered(500, 503)); // a short file: all of it
    CHECK(chunks[2].text == numbered(0, 4));     // at the top
    // The file being completed is not context for itself.
    auto except_a = r.chunks_except("a");
    REQUIRE(except_a.size() == 2);
    CHECK(except_a[0].uri == "b");
}

TEST_CASE("context ring: a piece replaces the ones it repeats; the oldest go beyond the bound", "[daemon][context]") {
    context_ring r(2, 10);
    r.add("a", numbered(0, 100), 20);            // lines 15..24
    r.add("a", numbered(0, 100), 21);            // lines 16..25: 9 of 10 lines again, replaces it
    auto c = r.chunks_except("x");
    REQUIRE(c.size() == 1);
    CHECK(c[0].text == numbered(16, 26));
    r.add("a", numbered(0, 100), 60);            // another place in the same file: kept beside it
    CHECK(r.size() == 2);
    r.add("b", numbered(200, 300), 50);          // a third piece: the oldest goes
    c = r.chunks_except("x");
    REQUIRE(c.size() == 2);
    CHECK(c[0].text == numbered(55, 65));
    CHECK(c[1].uri == "b");
    // Blank text adds nothing; a ring of size 0 holds nothing.
    r.add("c", "\n\n  \n", 1);
    CHECK(r.size() == 2);
    context_ring off(0, 10);
    off.add("a", numbered(0, 10), 1);
    CHECK(off.size() == 0);
    CHECK(context_ring::similarity("x\ny\n\n", "y\nx\nz\n") == 1.0);
    CHECK(context_ring::similarity("x\ny\n", "x\n") == 0.5);
}
