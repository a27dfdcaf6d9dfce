// Helpers shared by the golden tests: reading llama.cpp's JSON outputs and loading a model
// the way the engine needs it (file, hyperparameters and weights, vocabulary).
#pragma once

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "inference/decode/sampler.h"
#include "inference/forward/engine.h"
#include "inference/gguf/gguf_file.h"
#include "inference/model/model.h"
#include "inference/session/sequence.h"
#include "inference/tokenizer/vocab.h"

namespace hearth::inference::testing {

inline boost::json::value read_json_file(const std::string & path) {
    std::ifstream in(path);
    REQUIRE(in.good());
    std::stringstream ss;
    ss << in.rdbuf();
    return boost::json::parse(ss.str());
}

inline std::vector<int32_t> json_ids(const boost::json::value & v) {
    std::vector<int32_t> out;
    for (const auto & x : v.as_array()) out.push_back(static_cast<int32_t>(x.to_number<int64_t>()));
    return out;
}

// The model's views point into the file's mapping, which stays put when the struct moves.
struct test_model {
    gguf::gguf_file file;
    model mdl;
    tokenizer::vocab voc;
};

inline test_model load_test_model(const std::string & path) {
    auto file = gguf::gguf_file::open(path);
    REQUIRE(file.has_value());
    auto mdl = model::load(*file);
    REQUIRE(mdl.has_value());
    auto voc = tokenizer::load_vocab(*file);
    REQUIRE(voc.has_value());
    return test_model{std::move(*file), std::move(*mdl), std::move(*voc)};
}

struct run_summary {
    int n_prompts = 0;
    int n_identical = 0;        // greedy continuations identical to llama.cpp's
    float max_top_diff = 0;     // over llama.cpp's top-10 logits at the saved steps (teacher-forced)
    std::string first_mismatch;
};

// Runs every prompt of a completions.json (gen_golden.py's format): the prompt in one batch,
// a free-running greedy continuation, and teacher-forced steps for the top-10 logits.
// smooth_k: a quantized K stores smoothed keys where the model has K scales (engine::make_cache).
inline run_summary run_completions_golden(const std::string & model_path, const std::string & golden_path,
                                          kv_types cache_type, bool smooth_k = true) {
    auto tm = load_test_model(model_path);
    const auto * mdl = &tm.mdl;
    const auto * voc = &tm.voc;
    kernels::thread_pool pool(2);
    engine eng(*mdl, pool, 512);  // llama.cpp's n_batch: every prompt in one batch, as it evaluated them
    const auto golden = read_json_file(golden_path);
    const int32_t n_vocab = mdl->hp().n_vocab;

    run_summary sum;
    for (const auto & r : golden.at("results").as_array()) {
        const std::string name(r.at("name").as_string());
        INFO("case " << name);
        const auto prompt = json_ids(r.at("prompt_tokens"));
        // llama.cpp tokenized the prompt text with special tokens parsed; so must we
        CHECK(voc->tokenize(std::string(r.at("prompt").as_string()), true, true) == prompt);

        sequence seq(eng.make_cache(cache_type, 2048, smooth_k));
        std::vector<float> logits;
        REQUIRE(prefill(eng, seq, prompt, logits).has_value());
        sequence forced = seq;
        std::vector<float> forced_logits = logits;

        const auto want = json_ids(r.at("generated_tokens"));
        std::vector<int32_t> got;
        for (size_t i = 0; i < want.size(); ++i) {
            const int32_t tok = sampler::argmax(logits);
            got.push_back(tok);
            if (voc->is_eog(tok)) break;
            REQUIRE(decode_one(eng, seq, tok, logits).has_value());
        }
        ++sum.n_prompts;
        if (got == want) ++sum.n_identical;
        else if (sum.first_mismatch.empty()) {
            size_t k = 0;
            while (k < got.size() && k < want.size() && got[k] == want[k]) ++k;
            sum.first_mismatch = name + " at generated index " + std::to_string(k);
        }

        const auto & steps = r.at("steps").as_array();
        for (size_t s = 0; s < steps.size(); ++s) {
            if (s > 0) REQUIRE(decode_one(eng, forced, want[s - 1], forced_logits).has_value());
            for (const auto & pair : steps[s].at("top").as_array()) {
                const auto id = pair.as_array()[0].to_number<int64_t>();
                const float l = static_cast<float>(pair.as_array()[1].to_number<double>());
                REQUIRE(id < n_vocab);
                sum.max_top_diff = std::max(sum.max_top_diff, std::fabs(forced_logits[id] - l));
            }
        }
    }
    return sum;
}

}  // namespace hearth::inference::testing
