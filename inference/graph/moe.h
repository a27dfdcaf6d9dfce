// moe: the mixture-of-experts feed-forward block (qwen3moe), as llama.cpp computes it: a
// router picks each token's top n_expert_used experts by softmax probability, their weights
// are renormalised to sum to 1, each picked expert runs a SwiGLU FFN on the token, and the
// weighted outputs are added in the order of the picks (the highest first).
// Thread-safety: one moe_block per engine (it owns scratch buffers); not reentrant.
#pragma once

#include <cstdint>
#include <vector>

#include "inference/model/model.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace hearth::inference {

class moe_block {
public:
    moe_block(const hparams & hp, int32_t n_batch);

    // out = moe(x) for n tokens: x and out [n][n_embd] (out may not alias x).
    void eval(const layer & L, const float * x, int32_t n, float * out, kernels::matmul_context & mm,
              kernels::thread_pool & pool);

private:
    const hparams & hp_;
    std::vector<float> probs_;      // [n_batch][n_expert] router softmax
    std::vector<int32_t> order_;    // [n_expert] the experts sorted by one token's probability
    std::vector<int32_t> picks_;    // [n_batch][n_expert_used] expert ids, best first
    std::vector<float> weights_;    // [n_batch][n_expert_used] their renormalised probabilities
    std::vector<int32_t> rows_;     // [n_batch] token-slot index (t * n_expert_used + k) per gathered row
    std::vector<float> xg_;         // [n_batch][n_embd] the tokens routed to one expert
    std::vector<float> gate_, up_;  // [n_batch][n_ff]
    std::vector<float> down_;       // [n_batch][n_embd]
    std::vector<float> slots_;      // [n_batch][n_expert_used][n_embd] each pick's weighted output
};

}  // namespace hearth::inference
