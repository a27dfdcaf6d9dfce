// The tiny real model (stories260K F32) with a thread pool and an engine, loaded once per
// test process and shared by the cache, sequence and slot-store tests.
#pragma once

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "inference/forward/engine.h"
#include "inference/gguf/gguf_file.h"
#include "inference/model/model.h"
#include "kernels/thread_pool.h"

namespace hearth::inference::testing {

// n token ids drawn at a fixed seed, above the tiny vocabulary's special tokens (0-2).
inline std::vector<token_id> random_tokens(size_t n, uint32_t seed, int32_t n_vocab) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int32_t> d(3, n_vocab - 1);
    std::vector<token_id> v(n);
    for (auto & t : v) t = d(rng);
    return v;
}

inline const std::string k_tiny_model_path = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf";

struct tiny_engine {
    gguf::gguf_file file;
    model mdl;
    std::unique_ptr<kernels::thread_pool> pool;
    std::unique_ptr<engine> eng;
};

// One engine per batch size (a small batch makes prompts span several batches).
inline tiny_engine & tiny_model(int32_t n_batch = 256) {
    static std::map<int32_t, std::unique_ptr<tiny_engine>> engines;
    auto & slot = engines[n_batch];
    if (!slot) {
        auto f = gguf::gguf_file::open(k_tiny_model_path);
        REQUIRE(f.has_value());
        auto m = model::load(*f);
        REQUIRE(m.has_value());
        slot.reset(new tiny_engine{std::move(*f), std::move(*m), std::make_unique<kernels::thread_pool>(2), nullptr});
        slot->eng = std::make_unique<engine>(slot->mdl, *slot->pool, n_batch);
    }
    return *slot;
}

}  // namespace hearth::inference::testing
