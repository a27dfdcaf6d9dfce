// The prompt for a completion at the cursor: FIM layout where the model has FIM tokens, a
// plain continuation of the prefix where it has none (stories260K, a base story model).
#include <catch2/catch.hpp>

#include "inference/prompt/fim.h"
#include "tests/inference/golden_util.h"
#include "tests/inference/tiny_engine.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;

TEST_CASE("fim: a model without FIM tokens gets a prefix-only prompt; the strict builder refuses it",
          "[inference][fim]") {
    auto tm = load_test_model(k_tiny_model_path);
    const auto & v = tm.voc;
    REQUIRE_FALSE(has_fim(v));

    fim_input in;
    in.prefix = "Once upon a time, there was a";
    in.suffix = " dog.\nThe end.";
    in.extra.push_back({"other.txt", "Lily liked cats."});
    auto strict = build_fim_prompt(v, in);
    REQUIRE_FALSE(strict.has_value());
    CHECK_THAT(strict.message(), Catch::Matchers::Contains("no fill-in-the-middle tokens"));

    auto prompt = build_completion_prompt(v, in);
    REQUIRE(prompt.has_value());
    std::vector<token_id> want;
    if (v.add_bos()) want.push_back(v.bos());
    const auto body = v.tokenize(in.prefix, false, false);
    want.insert(want.end(), body.begin(), body.end());
    CHECK(*prompt == want);   // the suffix and the extra context are not in it

    // At the very start of a file only the BOS is left to continue from; without one there
    // is nothing to run, which is an error, not an empty prompt.
    in.prefix.clear();
    auto empty = build_completion_prompt(v, in);
    if (v.add_bos()) {
        REQUIRE(empty.has_value());
        CHECK(*empty == std::vector<token_id>{v.bos()});
    } else {
        REQUIRE_FALSE(empty.has_value());
        CHECK_THAT(empty.message(), Catch::Matchers::Contains("before the cursor is empty"));
    }
}
