// The daemon's engine model service on the tiny fixture model (stories260K, F32 weights and
// cache): what complete() samples.
#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "daemon/model_service.h"

using namespace hearth::daemon;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<model_service> tiny_service() {
    engine_options o;
    o.model_path = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf";
    o.cache_type = "f32";
    o.n_threads = 1;
    o.n_ctx = 512;
    auto s = make_engine_model_service(o);
    REQUIRE(s.has_value());
    return std::move(*s);
}

fim_request story_request() {
    fim_request r;
    r.uri = "file:///story.txt";
    r.prefix = "Once upon a time, there was a little girl named Lily. She";
    r.mode = completion_mode::multi_line;
    r.n_predict = 24;
    r.time_budget = 60s;
    return r;
}

}  // namespace

TEST_CASE("engine service: the first candidate is greedy whatever the temperature", "[daemon][engine]") {
    auto svc = tiny_service();
    fim_request greedy = story_request();
    greedy.temperature = 0.0f;
    auto want = svc->complete(greedy, {}, {});
    REQUIRE(want.has_value());
    REQUIRE(want->candidates.size() == 1);
    REQUIRE_FALSE(want->candidates[0].text.empty());

    // An Automatic request carries the default temperature (0.7): its one candidate is still greedy.
    fim_request automatic = story_request();
    REQUIRE(automatic.temperature > 0.5f);
    for (uint64_t seed : {42u, 7u, 1234u}) {
        automatic.seed = seed;
        auto got = svc->complete(automatic, {}, {});
        REQUIRE(got.has_value());
        REQUIRE(got->candidates.size() == 1);
        INFO("seed " << seed);
        CHECK(got->candidates[0].text == want->candidates[0].text);
    }

    // Invoked: the first candidate is the greedy one, the others are sampled and differ from it.
    fim_request invoked = story_request();
    invoked.n_candidates = 3;
    auto many = svc->complete(invoked, {}, {});
    REQUIRE(many.has_value());
    REQUIRE(many->candidates.size() >= 2);
    CHECK(many->candidates[0].text == want->candidates[0].text);
    for (size_t k = 1; k < many->candidates.size(); ++k) CHECK(many->candidates[k].text != want->candidates[0].text);
}

