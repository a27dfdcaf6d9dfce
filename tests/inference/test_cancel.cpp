// Cancellation inside the forward pass on the tiny real model: a stop requested while a
// prompt or a decode step runs ends it at the next layer boundary, leaves the sequence
// holding only final positions, and changes no result of a pass that is not stopped.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <stop_token>

#include "inference/decode/generate.h"
#include "inference/session/sequence.h"
#include "inference/tokenizer/vocab.h"
#include "tests/inference/tiny_engine.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;

namespace {

// Requests the stop when the pass reaches layer `at_layer` of its `at_batch`-th batch (counted
// from 0) and records the layers that ran after it.
struct stop_at {
    std::stop_source source;
    int at_batch = 0, at_layer = 0;
    int batch = -1;
    int layers_after_stop = 0;
    bool stopped = false;

    engine::observer observer() {
        return [this](std::string_view name, int32_t il, float *, int32_t, int32_t) {
            if (name == "embd") ++batch;
            if (name != "attn_norm") return;   // the first step of every layer
            if (stopped) ++layers_after_stop;
            if (batch == at_batch && il == at_layer && !stopped) {
                source.request_stop();
                stopped = true;
            }
        };
    }
};

struct observer_reset {
    engine & eng;
    ~observer_reset() { eng.set_observer({}); }
};

}  // namespace

TEST_CASE("a stop during a prefill ends it at the next layer, keeping the batches that completed",
          "[inference][cancel]") {
    auto & t = tiny_model(256);
    observer_reset reset{*t.eng};
    const auto prompt = random_tokens(300, 5, t.mdl.hp().n_vocab);
    sequence seq(t.eng->make_cache(kernels::tensor_type::f16, 512));
    std::vector<float> logits;

    stop_at s;
    s.at_batch = 2;
    s.at_layer = 1;
    t.eng->set_observer(s.observer());
    auto st = prefill(*t.eng, seq, prompt, logits, prefill_options{true, 0, s.source.get_token()});
    REQUIRE(st.has_value());
    CHECK(st->stopped);
    CHECK(s.layers_after_stop == 0);   // the stop landed before the next layer began
    // A stoppable prompt runs in batches of engine::k_stoppable_batch: two completed.
    const auto kept = static_cast<size_t>(2 * engine::k_stoppable_batch);
    CHECK(seq.cache.n_pos() == static_cast<int32_t>(kept));
    CHECK(seq.tokens == std::vector<token_id>(prompt.begin(), prompt.begin() + static_cast<long>(kept)));
    CHECK(st->n_evaluated == static_cast<int32_t>(kept));
    t.eng->set_observer({});

    // The next prefill starts from the kept prefix and ends bit for bit where a cold one does.
    auto again = prefill(*t.eng, seq, prompt, logits);
    REQUIRE(again.has_value());
    CHECK_FALSE(again->stopped);
    CHECK(again->n_reused == static_cast<int32_t>(kept));
    sequence cold(t.eng->make_cache(kernels::tensor_type::f16, 512));
    std::vector<float> cold_logits;
    REQUIRE(prefill(*t.eng, cold, prompt, cold_logits, /*reuse=*/false).has_value());
    REQUIRE(logits.size() == cold_logits.size());
    CHECK(std::memcmp(logits.data(), cold_logits.data(), logits.size() * sizeof(float)) == 0);
}

TEST_CASE("a stop token that is never requested changes no result", "[inference][cancel]") {
    auto & t = tiny_model(256);
    const auto prompt = random_tokens(300, 9, t.mdl.hp().n_vocab);
    std::stop_source never;
    sequence a(t.eng->make_cache(kernels::tensor_type::f32, 512)), b(t.eng->make_cache(kernels::tensor_type::f32, 512));
    std::vector<float> la, lb;
    REQUIRE(prefill(*t.eng, a, prompt, la, /*reuse=*/false).has_value());
    REQUIRE(prefill(*t.eng, b, prompt, lb, prefill_options{false, 0, never.get_token()}).has_value());
    CHECK(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)) == 0);
    for (int32_t il = 0; il < t.mdl.hp().n_layer; ++il)
        CHECK(std::memcmp(a.cache.k_data(il), b.cache.k_data(il), a.cache.row_bytes(kv_half::k) * prompt.size()) == 0);
    for (int i = 0; i < 8; ++i) {
        const token_id tok = sampler::argmax(la);
        REQUIRE(decode_one(*t.eng, a, tok, la).has_value());
        REQUIRE(decode_one(*t.eng, b, tok, lb, never.get_token()).has_value());
        CHECK(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("a stop during a decode step ends generation as cancelled, the sequence unchanged", "[inference][cancel]") {
    auto & t = tiny_model(256);
    observer_reset reset{*t.eng};
    const auto prompt = random_tokens(40, 3, t.mdl.hp().n_vocab);
    sequence seq(t.eng->make_cache(kernels::tensor_type::f16, 512));
    std::vector<float> logits;
    REQUIRE(prefill(*t.eng, seq, prompt, logits).has_value());

    // Seen from here, decode steps are batches 0, 1, ...: stop inside the second.
    stop_at s;
    s.at_batch = 1;
    s.at_layer = 2;
    t.eng->set_observer(s.observer());
    auto voc = tokenizer::load_vocab(t.file);
    REQUIRE(voc.has_value());
    generation_params params;
    params.n_predict = 50;
    params.time_budget = std::chrono::milliseconds(0);
    auto gen = generate(*t.eng, *voc, seq, logits, params, s.source.get_token(), {});
    REQUIRE(gen.has_value());
    CHECK(gen->finish == finish_reason::cancelled);
    CHECK(s.layers_after_stop == 0);
    // One decode step completed; the second token was sampled but never entered the cache.
    CHECK(seq.cache.n_pos() == 41);
    CHECK(seq.tokens.size() == 41);
}
