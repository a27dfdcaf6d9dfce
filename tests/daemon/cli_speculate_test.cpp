// `hearth complete --speculate MODE --draft MODEL`: the speculation figures with -v, and clear
// errors for a bad mode, a mode that needs a draft without one, and a draft of another vocabulary
// (the default model's).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include "tests/daemon/hearth_process.h"
#include "tests/default_model.h"

using namespace hearth::daemon::testing;

namespace {

const std::string k_model = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf";
const std::string k_draft = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-Q4_0.gguf";

struct outcome {
    int code;
    std::string out, err;
};

outcome complete(std::vector<std::string> extra) {
    const std::string dir = temp_dir();
    std::vector<std::string> args{"complete", "-m", k_model, "--prompt", "Once upon a time", "-n", "24", "-v"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto c = spawn(args, dir + "/stderr.log");
    ::close(c.to_child);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(c.from_child, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    ::close(c.from_child);
    const int code = wait_exit(c.pid);
    return {code, out, slurp(dir + "/stderr.log")};
}

}  // namespace

TEST_CASE("hearth complete --speculate: the same text, the guesses reported; bad choices refused", "[daemon][binary][speculate]") {
    const auto plain = complete({});
    REQUIRE(plain.code == 0);
    CHECK(plain.err.find("speculation:") == std::string::npos);
    const auto draft = complete({"--draft", k_draft});   // --draft alone means draft mode
    INFO(draft.err);
    REQUIRE(draft.code == 0);
    CHECK(draft.out == plain.out);
    CHECK(draft.err.find("speculation: draft, ") != std::string::npos);
    CHECK(draft.err.find("tokens per target pass") != std::string::npos);
    const auto both = complete({"--speculate", "both", "--draft", k_draft});
    CHECK(both.code == 0);
    CHECK(both.out == plain.out);

    const auto bad = complete({"--speculate", "fast"});
    CHECK(bad.code == 2);
    CHECK(bad.err.find("not one of off, lookup, draft, both") != std::string::npos);
    const auto no_draft = complete({"--speculate", "draft"});
    CHECK(no_draft.code == 1);
    CHECK(no_draft.err.find("needs a draft model") != std::string::npos);
}

TEST_CASE("hearth complete --draft with another vocabulary is refused", "[daemon][binary][speculate][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(other);
    const auto foreign = complete({"--draft", other});
    CHECK(foreign.code == 1);
    CHECK(foreign.err.find("a draft must share the vocabulary") != std::string::npos);
}
