// sampler: picks the next token from a row of logits. Greedy (argmax, lowest id on a tie,
// as llama.cpp's greedy sampler) or a chain of penalties -> top-k -> top-p -> min-p ->
// temperature -> a draw from a seeded generator, so a run is reproducible from its seed.
// Thread-safety: one sampler per generation; not shared between threads.
#pragma once

#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <vector>

#include "base/result.h"

namespace hearth::inference {

using token_id = int32_t;

struct sampler_params {
    float temperature = 0.0f;       // <= 0: greedy
    int32_t top_k = 0;              // 0: off
    float top_p = 1.0f;             // 1: off
    float min_p = 0.0f;             // 0: off
    float repeat_penalty = 1.0f;    // 1: off; divides positive logits, multiplies negative ones
    float presence_penalty = 0.0f;  // subtracted once from every token in the window
    int32_t penalty_window = 64;    // how many recent tokens the penalties look at
    uint64_t seed = 0x5eed;
};

// Checks ranges; the message names the field and what was expected.
status validate(const sampler_params & p);

class sampler {
public:
    explicit sampler(sampler_params params);

    // Picks a token from logits (modified in place by the penalties). n_vocab = logits.size().
    token_id sample(std::span<float> logits);

    // Records a token that is now part of the sequence (prompt or generated) for the penalties.
    void accept(token_id tok);
    void reset();

    static token_id argmax(std::span<const float> logits);

private:
    void apply_penalties(std::span<float> logits) const;

    sampler_params params_;
    std::mt19937_64 rng_;
    std::deque<token_id> recent_;
    std::vector<std::pair<float, token_id>> candidates_;  // reused between calls
};

}  // namespace hearth::inference
