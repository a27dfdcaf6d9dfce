#include <catch2/catch.hpp>

#include <map>

#include "inference/decode/sampler.h"

using namespace hearth::inference;

TEST_CASE("greedy picks the largest logit, the lowest id on a tie", "[inference][sampler]") {
    std::vector<float> l{0.5f, 2.0f, -1.0f, 2.0f};
    sampler s({});
    CHECK(s.sample(l) == 1);
    CHECK(sampler::argmax(std::vector<float>{-3.0f, -3.0f}) == 0);
}

TEST_CASE("top-k 1 is greedy at any temperature", "[inference][sampler]") {
    sampler_params p;
    p.temperature = 1.5f;
    p.top_k = 1;
    sampler s(p);
    for (int i = 0; i < 20; ++i) {
        std::vector<float> l{0.1f, 0.3f, 0.2f};
        CHECK(s.sample(l) == 1);
    }
}

TEST_CASE("sampling follows the softmax and is reproducible from the seed", "[inference][sampler]") {
    sampler_params p;
    p.temperature = 1.0f;
    p.seed = 7;
    sampler a(p), b(p);
    std::map<token_id, int> counts;
    const int n = 20000;
    for (int i = 0; i < n; ++i) {
        std::vector<float> la{0.0f, std::log(3.0f)}, lb = la;  // p = 1/4, 3/4
        const token_id ta = a.sample(la);
        CHECK(ta == b.sample(lb));
        ++counts[ta];
    }
    CHECK(counts[1] / double(n) == Approx(0.75).margin(0.02));
}

TEST_CASE("top-p and min-p cut the tail", "[inference][sampler]") {
    sampler_params p;
    p.temperature = 1.0f;
    p.top_p = 0.5f;  // the first token alone has p = 0.6
    sampler s(p);
    for (int i = 0; i < 200; ++i) {
        std::vector<float> l{std::log(0.6f), std::log(0.3f), std::log(0.1f)};
        CHECK(s.sample(l) == 0);
    }
    sampler_params q;
    q.temperature = 1.0f;
    q.min_p = 0.4f;  // keeps tokens with p >= 0.4 * 0.6
    sampler t(q);
    for (int i = 0; i < 200; ++i) {
        std::vector<float> l{std::log(0.6f), std::log(0.3f), std::log(0.1f)};
        CHECK(t.sample(l) != 2);
    }
}

TEST_CASE("the repetition penalty lowers tokens in the window", "[inference][sampler]") {
    sampler_params p;
    p.repeat_penalty = 2.0f;
    sampler s(p);
    s.accept(0);
    std::vector<float> l{3.0f, 2.0f};
    CHECK(s.sample(l) == 1);  // 3 / 2 = 1.5 < 2
    CHECK(l[0] == 1.5f);
}

TEST_CASE("sampler parameters are validated", "[inference][sampler]") {
    sampler_params p;
    CHECK(validate(p).has_value());
    p.top_p = 0.0f;
    CHECK_FALSE(validate(p).has_value());
    p = {};
    p.temperature = -1.0f;
    CHECK(validate(p).message().find("temperature") != std::string::npos);
}
