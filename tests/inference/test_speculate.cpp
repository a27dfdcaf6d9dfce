// Speculative decoding: the guesses (lookup_proposal), the batch that verifies them
// (engine::eval_steps, bit for bit a run of decode steps), and generate() with each mode giving
// plain decoding's output bit for bit: on the tiny model (a Q4_0 copy of it as the draft), on the
// default model's golden prompts with both cache types, and on the pinned 0.5B/1.5B pair when
// both files are there.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "inference/decode/generate.h"
#include "inference/decode/speculate.h"
#include "tests/inference/golden_util.h"
#include "tests/inference/tiny_engine.h"
#include "tests/default_model.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;

namespace {

const std::string k_golden = std::string(HEARTH_SOURCE_DIR) + "/tests/golden/qwen2.5-coder-0.5b-instruct-q4_k_m/completions.json";

struct run_output {
    generation_result gen;
    std::vector<token_id> seq_tokens;
    std::vector<float> last_logits;
};

struct prefilled {
    sequence seq;
    std::vector<float> logits;
};

prefilled prefill_cold(engine & eng, std::span<const token_id> prompt, kernels::tensor_type type) {
    prefilled p{sequence(eng.make_cache(type, 2048)), {}};
    REQUIRE(prefill(eng, p.seq, prompt, p.logits, false).has_value());
    return p;
}

// Generates from a copy of a prefilled sequence with the given speculation.
run_output run(engine & eng, const tokenizer::vocab & voc, prefilled start, generation_params params,
               speculation_options spec = {}) {
    params.speculation = spec;
    auto gen = generate(eng, voc, start.seq, start.logits, params);
    REQUIRE(gen.has_value());
    CHECK(start.seq.cache.n_pos() == static_cast<int32_t>(start.seq.tokens.size()));
    return {std::move(*gen), start.seq.tokens, start.logits};
}

void check_same(const run_output & plain, const run_output & spec) {
    CHECK(spec.gen.tokens == plain.gen.tokens);
    CHECK(spec.gen.text == plain.gen.text);
    CHECK(spec.gen.finish == plain.gen.finish);
    CHECK(spec.seq_tokens == plain.seq_tokens);
    REQUIRE(spec.last_logits.size() == plain.last_logits.size());
    CHECK(std::memcmp(spec.last_logits.data(), plain.last_logits.data(), plain.last_logits.size() * sizeof(float)) == 0);
}

std::vector<token_id> golden_prompt(const boost::json::value & golden, size_t i) {
    return json_ids(golden.at("results").as_array()[i].at("prompt_tokens"));
}

}  // namespace

TEST_CASE("lookup_proposal: the tokens after the latest earlier occurrence of the longest n-gram ending the history",
          "[inference][speculate]") {
    const std::vector<token_id> h{1, 2, 3, 9, 1, 2, 3, 7, 8, 5, 2, 3};
    // "2 3" ends it; "5 2 3" and longer occur nowhere else; the latest "2 3" is at 5, then 7 8 5 ...
    CHECK(lookup_proposal(h, 3, 4, 2) == std::vector<token_id>{7, 8, 5});
    CHECK(lookup_proposal(h, 10, 4, 2) == std::vector<token_id>{7, 8, 5, 2, 3});
    CHECK(lookup_proposal(h, 1, 4, 2) == std::vector<token_id>{7});
    // Longest first: "1 2 3" at the end matches at 0 and 4; the latest wins.
    const std::vector<token_id> h2{1, 2, 3, 4, 1, 2, 3, 6, 2, 3, 5, 1, 2, 3};
    CHECK(lookup_proposal(h2, 2, 4, 2) == std::vector<token_id>{6, 2});
    CHECK(lookup_proposal(h2, 2, 4, 3) == std::vector<token_id>{6, 2});
    // A repeated token continues itself (the match may overlap the pattern).
    CHECK(lookup_proposal(std::vector<token_id>{4, 4, 4}, 5, 4, 2) == std::vector<token_id>{4});
    CHECK(lookup_proposal(std::vector<token_id>{1, 2, 3, 4}, 4, 4, 2).empty());
    CHECK(lookup_proposal(std::vector<token_id>{1, 2, 3, 2}, 4, 4, 2).empty());   // a 1-gram is below ngram_min
    CHECK(lookup_proposal(std::vector<token_id>{1, 2, 3, 2}, 4, 4, 1) == std::vector<token_id>{3, 2});
    CHECK(lookup_proposal(std::vector<token_id>{}, 4, 4, 1).empty());
    CHECK(lookup_proposal(std::vector<token_id>{7}, 4, 4, 1).empty());
}

TEST_CASE("speculation: modes parse, bad options are refused with the field named", "[inference][speculate]") {
    CHECK(*parse_speculate_mode("both") == speculate_mode::both);
    CHECK(*parse_speculate_mode("off") == speculate_mode::off);
    const auto bad = parse_speculate_mode("fast");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.message().find("off, lookup, draft, both") != std::string::npos);
    auto & t = tiny_model();
    speculation_options o;
    o.mode = speculate_mode::draft;
    CHECK(validate(o, *t.eng).message().find("needs a draft model") != std::string::npos);
    o.mode = speculate_mode::lookup;
    o.n_draft_max = 0;
    CHECK(validate(o, *t.eng).message().find("n_draft_max") != std::string::npos);
    o.n_draft_max = 8;
    o.n_draft_start = 9;
    CHECK(validate(o, *t.eng).message().find("n_draft_start") != std::string::npos);
    o.n_draft_start = 4;
    o.ngram_min = 0;
    CHECK(validate(o, *t.eng).message().find("n-gram") != std::string::npos);
    o.ngram_min = 2;
    CHECK(validate(o, *t.eng).has_value());
}

TEST_CASE("eval_steps: a batch gives the logits and K/V of one decode step per token, bit for bit (tiny model)",
          "[inference][speculate]") {
    auto & t = tiny_model();
    const auto prompt = random_tokens(40, 7, t.mdl.hp().n_vocab);
    const auto more = random_tokens(9, 8, t.mdl.hp().n_vocab);
    for (const auto type : {kernels::tensor_type::f32, kernels::tensor_type::f16}) {
        sequence a(t.eng->make_cache(type, 128)), b(t.eng->make_cache(type, 128));
        std::vector<float> la, lb;
        REQUIRE(prefill(*t.eng, a, prompt, la, false).has_value());
        REQUIRE(prefill(*t.eng, b, prompt, lb, false).has_value());
        std::vector<float> steps;
        for (token_id tok : more) {
            REQUIRE(t.eng->eval(a.cache, std::span(&tok, 1), la).has_value());
            steps.insert(steps.end(), la.begin(), la.end());
        }
        REQUIRE(t.eng->eval_steps(b.cache, more, lb).has_value());
        REQUIRE(lb.size() == steps.size());
        CHECK(std::memcmp(lb.data(), steps.data(), steps.size() * sizeof(float)) == 0);
        CHECK(b.cache.n_pos() == a.cache.n_pos());
        for (int32_t il = 0; il < t.mdl.hp().n_layer; ++il)
            CHECK(std::memcmp(a.cache.k_data(il), b.cache.k_data(il), a.cache.row_bytes(kv_half::k) * a.cache.n_pos()) == 0);
    }
}

TEST_CASE("speculation: greedy and sampled output bit for bit as without it, every mode (tiny model, Q4_0 draft)",
          "[inference][speculate]") {
    auto & t = tiny_model();
    auto voc = tokenizer::load_vocab(t.file);
    REQUIRE(voc.has_value());
    // The fixtures are one model in several types: the same vocabulary, so Q4_0 can draft for F32.
    auto df = gguf::gguf_file::open(std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-Q4_0.gguf");
    REQUIRE(df.has_value());
    auto dm = model::load(*df);
    REQUIRE(dm.has_value());
    engine draft(*dm, *t.pool);
    sequence draft_seq(draft.make_cache(kernels::tensor_type::f32, 512));

    const auto prompt = voc->tokenize("Once upon a time, there was a little girl named Lily. She loved to play outside. "
                                      "One day, Lily", true, false);
    for (const float temp : {0.0f, 0.9f}) {
        for (const uint64_t seed : {1u, 2u, 3u}) {
            if (temp == 0.0f && seed > 1) continue;
            generation_params p;
            p.n_predict = 80;
            p.sampling.temperature = temp;
            p.sampling.top_k = temp > 0 ? 40 : 0;
            p.sampling.seed = seed;
            const auto start = prefill_cold(*t.eng, prompt, kernels::tensor_type::f32);
            const auto plain = run(*t.eng, *voc, start, p);
            for (const auto mode : {speculate_mode::lookup, speculate_mode::draft, speculate_mode::both}) {
                INFO("temp " << temp << " seed " << seed << " mode " << speculate_mode_name(mode));
                speculation_options o;
                o.mode = mode;
                o.draft = &draft;
                o.draft_seq = &draft_seq;
                const auto spec = run(*t.eng, *voc, start, p, o);
                check_same(plain, spec);
                const auto & st = spec.gen.speculation;
                // Every generated token but one a stop rule ends on was appended (an end token is not).
                const bool last_kept_out = spec.gen.finish == finish_reason::stop_rule;
                CHECK(st.n_tokens == static_cast<int32_t>(spec.gen.tokens.size()) - (last_kept_out ? 1 : 0));
                CHECK(st.n_accepted + st.n_rejected <= st.n_drafted);
                // The draft is the same model in 4 bits: its greedy guesses mostly hold.
                if (mode != speculate_mode::lookup && temp == 0.0f) {
                    CHECK(st.n_drafted > 0);
                    CHECK(st.acceptance() > 0.5);
                    CHECK(st.n_target_passes < st.n_tokens);
                }
            }
        }
    }
}

TEST_CASE("speculation: a draft that is the target itself is never wrong under greedy; the guess length grows",
          "[inference][speculate]") {
    auto & t = tiny_model();
    auto voc = tokenizer::load_vocab(t.file);
    REQUIRE(voc.has_value());
    engine self(t.mdl, *t.pool);
    sequence draft_seq(self.make_cache(kernels::tensor_type::f32, 512));
    generation_params p;
    p.n_predict = 100;
    speculation_options o = {speculate_mode::draft, &self, &draft_seq};
    const auto start = prefill_cold(*t.eng, random_tokens(12, 5, t.mdl.hp().n_vocab), kernels::tensor_type::f32);
    const auto plain = run(*t.eng, *voc, start, p);
    const auto spec = run(*t.eng, *voc, start, p, o);
    check_same(plain, spec);
    const auto & st = spec.gen.speculation;
    CHECK(st.n_rejected == 0);
    CHECK(st.n_accepted > 0);
    CHECK(st.acceptance() == 1.0);
    // 4, 8, 16, 16, ...: a hundred tokens in at most 1 + (100 - 1 - 4 - 8) / 16 + 3 passes.
    CHECK(st.n_target_passes <= 9);
}

TEST_CASE("speculation: a stop during generation ends it cancelled, the sequences consistent", "[inference][speculate][cancel]") {
    auto & t = tiny_model();
    auto voc = tokenizer::load_vocab(t.file);
    REQUIRE(voc.has_value());
    engine self(t.mdl, *t.pool);
    for (const auto mode : {speculate_mode::lookup, speculate_mode::draft, speculate_mode::both}) {
        INFO("mode " << speculate_mode_name(mode));
        sequence draft_seq(self.make_cache(kernels::tensor_type::f32, 512));
        auto start = prefill_cold(*t.eng, random_tokens(12, 6, t.mdl.hp().n_vocab), kernels::tensor_type::f32);
        generation_params p;
        p.n_predict = 200;
        p.speculation = {mode, &self, &draft_seq};
        std::stop_source stop;
        int pieces = 0;
        auto gen = generate(*t.eng, *voc, start.seq, start.logits, p, stop.get_token(), [&](std::string_view) {
            if (++pieces == 3) stop.request_stop();
        });
        REQUIRE(gen.has_value());
        CHECK(gen->finish == finish_reason::cancelled);
        CHECK(gen->tokens.size() < 200);
        CHECK(start.seq.cache.n_pos() == static_cast<int32_t>(start.seq.tokens.size()));
        CHECK(draft_seq.cache.n_pos() == static_cast<int32_t>(draft_seq.tokens.size()));
    }
}

TEST_CASE("speculation: the draft's vocabulary must be the target's", "[inference][speculate][default-model]") {
    auto & t = tiny_model();
    HEARTH_DEFAULT_MODEL_OR_SKIP(path);
    auto other = load_test_model(path);
    kernels::thread_pool pool(1);
    engine draft(other.mdl, pool);
    sequence draft_seq(draft.make_cache(kernels::tensor_type::f16, 64));
    speculation_options o;
    o.mode = speculate_mode::both;
    o.draft = &draft;
    o.draft_seq = &draft_seq;
    CHECK(validate(o, *t.eng).message().find("share the vocabulary") != std::string::npos);
}

TEST_CASE("default model: lookup speculation keeps the golden prompts' greedy output bit for bit (f16 and q8_0 caches)",
          "[inference][speculate][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(path);
    auto tm = load_test_model(path);
    kernels::thread_pool pool(2);
    engine eng(tm.mdl, pool, 512);
    const auto golden = read_json_file(k_golden);
    const size_t n_prompts = golden.at("results").as_array().size();
    speculation_stats total;
    for (const auto type : {kernels::tensor_type::f16, kernels::tensor_type::q8_0}) {
        // eval_steps against decode steps directly: the logits of every row and the K/V they leave.
        {
            const auto prompt = golden_prompt(golden, 0);
            sequence a(eng.make_cache(type, 1024)), b(eng.make_cache(type, 1024));
            std::vector<float> la, lb, steps;
            REQUIRE(prefill(eng, a, prompt, la, false).has_value());
            REQUIRE(prefill(eng, b, prompt, lb, false).has_value());
            const std::vector<token_id> more{262, 470, 1140, 13, 198};
            for (token_id tok : more) {
                REQUIRE(eng.eval(a.cache, std::span(&tok, 1), la).has_value());
                steps.insert(steps.end(), la.begin(), la.end());
            }
            REQUIRE(eng.eval_steps(b.cache, more, lb).has_value());
            CHECK(std::memcmp(lb.data(), steps.data(), steps.size() * sizeof(float)) == 0);
            for (int32_t il = 0; il < tm.mdl.hp().n_layer; ++il)
                CHECK(std::memcmp(a.cache.v_data(il), b.cache.v_data(il), a.cache.row_bytes(kv_half::v) * a.cache.n_pos()) == 0);
        }
        for (size_t i = 0; i < n_prompts; ++i) {
            INFO("cache " << kernels::tensor_type_info(type).name << " prompt " << i);
            generation_params p;
            p.n_predict = 24;
            const auto start = prefill_cold(eng, golden_prompt(golden, i), type);
            const auto plain = run(eng, tm.voc, start, p);
            speculation_options o;
            o.mode = speculate_mode::lookup;
            const auto spec = run(eng, tm.voc, start, p, o);
            check_same(plain, spec);
            total.n_drafted += spec.gen.speculation.n_drafted;
            total.n_accepted += spec.gen.speculation.n_accepted;
        }
    }
    WARN("lookup on the golden prompts: " << total.n_accepted << " of " << total.n_drafted << " guesses kept");
    CHECK(total.n_drafted > 0);
}

TEST_CASE("pinned models: the 0.5B drafting for the 1.5B keeps greedy output bit for bit (f16 and q8_0)",
          "[inference][speculate][default-model][pinned-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(path);
    const std::string target_path = hearth::test::pinned_model_file("qwen2.5-coder-1.5b-instruct-q4_k_m");
    if (target_path.empty())
        HEARTH_SKIP("the 1.5B model is not in the model cache (scripts/fetch-model --model qwen2.5-coder-1.5b-instruct-q4_k_m)");
    auto dm = load_test_model(path);
    auto tm = load_test_model(target_path);
    kernels::thread_pool pool(2);
    engine eng(tm.mdl, pool, 512), draft(dm.mdl, pool, 512);
    const auto golden = read_json_file(k_golden);
    speculation_stats total;
    for (const auto type : {kernels::tensor_type::f16, kernels::tensor_type::q8_0}) {
        {   // one of the six prompts (the shortest) keeps the test short
            const size_t i = 5;
            INFO("cache " << kernels::tensor_type_info(type).name << " prompt " << i);
            generation_params p;
            p.n_predict = 32;
            const auto start = prefill_cold(eng, golden_prompt(golden, i), type);
            const auto plain = run(eng, tm.voc, start, p);
            sequence draft_seq(draft.make_cache(type, 2048));
            speculation_options o;
            o.mode = speculate_mode::both;
            o.draft = &draft;
            o.draft_seq = &draft_seq;
            const auto spec = run(eng, tm.voc, start, p, o);
            check_same(plain, spec);
            total.n_drafted += spec.gen.speculation.n_drafted;
            total.n_accepted += spec.gen.speculation.n_accepted;
        }
    }
    WARN("0.5B drafting for 1.5B: " << total.n_accepted << " of " << total.n_drafted << " guesses kept");
    CHECK(total.n_accepted > 0);
}
