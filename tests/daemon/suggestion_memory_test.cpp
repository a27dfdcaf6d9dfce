// suggestion_memory: typed-ahead and prefetched suggestions are found by the text around
// the cursor, and only when the typed characters extend them.
#include <catch2/catch.hpp>

#include "daemon/pipeline/suggestion_memory.h"

using hearth::daemon::suggestion_memory;
using strings = std::vector<std::string>;

TEST_CASE("suggestion memory: typing the start of a suggestion leaves its rest", "[daemon][suggestion]") {
    suggestion_memory m;
    m.remember("doc", "def f(x):\n    return ", "\n\nprint(f(2))\n", {"x * 2", "x + x", ""});
    // Nothing typed yet: both items; typed "x": the rest of both; typed "x *": only the first.
    CHECK(m.lookup("doc", "def f(x):\n    return ", "\n\nprint(f(2))\n") == strings{"x * 2", "x + x"});
    CHECK(m.lookup("doc", "def f(x):\n    return x", "\n\nprint(f(2))\n") == strings{" * 2", " + x"});
    CHECK(m.lookup("doc", "def f(x):\n    return x *", "\n\nprint(f(2))\n") == strings{" 2"});
    CHECK(m.hits() == 3);
    // The whole suggestion typed: nothing is left to insert.
    CHECK_FALSE(m.lookup("doc", "def f(x):\n    return x * 2", "\n\nprint(f(2))\n"));
    // Typed something else, the text after the cursor changed, the text before it changed,
    // another document: no match.
    CHECK_FALSE(m.lookup("doc", "def f(x):\n    return y", "\n\nprint(f(2))\n"));
    CHECK_FALSE(m.lookup("doc", "def f(x):\n    return x", "\n\nprint(f(3))\n"));
    CHECK_FALSE(m.lookup("doc", "def g(x):\n    return x", "\n\nprint(f(2))\n"));
    CHECK_FALSE(m.lookup("other", "def f(x):\n    return x", "\n\nprint(f(2))\n"));
    // Deleting back past where the suggestion was made: no match either.
    CHECK_FALSE(m.lookup("doc", "def f(x):\n    return", "\n\nprint(f(2))\n"));
    CHECK(m.hits() == 3);
}

TEST_CASE("suggestion memory: a prefetched successor is found after the accept; records are bounded",
          "[daemon][suggestion]") {
    suggestion_memory m;
    const std::string after = "\n}\n";
    m.remember("doc", "int main() {\n    ", after, {"int a = 1;"});
    // Prefetch: the completion after accepting "int a = 1;", computed for that text.
    m.remember("doc", "int main() {\n    int a = 1;", after, {"\n    return a;"});
    CHECK(m.lookup("doc", "int main() {\n    int a = 1;", after) == strings{"\n    return a;"});
    CHECK(m.lookup("doc", "int main() {\n    int", after) == strings{" a = 1;"});
    CHECK(m.has("doc", "int main() {\n    int a = 1;", after));
    CHECK_FALSE(m.has("doc", "int main() {\n    int", after));
    // Empty items are not remembered.
    m.remember("doc", "x", "y", {""});
    CHECK_FALSE(m.lookup("doc", "x", "y"));
    // Only the newest k_records_per_key records are kept.
    for (size_t i = 0; i < suggestion_memory::k_records_per_key; ++i)
        m.remember("doc", "line " + std::to_string(i), after, {"!"});
    CHECK_FALSE(m.lookup("doc", "int main() {\n    ", after));
    CHECK(m.lookup("doc", "line 0", after) == strings{"!"});
    m.forget("doc");
    CHECK_FALSE(m.lookup("doc", "line 0", after));
}
