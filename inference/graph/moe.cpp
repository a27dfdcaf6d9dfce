#include "inference/graph/moe.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "kernels/ops.h"

namespace hearth::inference {
namespace {

// Expert e's rows of a stacked expert tensor.
kernels::weight_view expert_view(const weight & w, int32_t e, int64_t n_rows) {
    return kernels::weight_view{w.type, static_cast<const uint8_t *>(w.data) + static_cast<size_t>(e) * n_rows * w.row_bytes,
                                n_rows, w.n_cols, w.row_bytes};
}

}  // namespace

moe_block::moe_block(const hparams & hp, int32_t n_batch) : hp_(hp) {
    const size_t nb = static_cast<size_t>(n_batch), k = static_cast<size_t>(hp.n_expert_used);
    probs_.resize(nb * hp.n_expert);
    order_.resize(static_cast<size_t>(hp.n_expert));
    picks_.resize(nb * k);
    weights_.resize(nb * k);
    rows_.resize(nb);
    xg_.resize(nb * hp.n_embd);
    gate_.resize(nb * hp.n_ff);
    up_.resize(nb * hp.n_ff);
    down_.resize(nb * hp.n_embd);
    slots_.resize(nb * k * hp.n_embd);
}

void moe_block::eval(const layer & L, const float * x, int32_t n, float * out, kernels::matmul_context & mm,
                     kernels::thread_pool & pool) {
    const int32_t n_embd = hp_.n_embd, n_ff = hp_.n_ff, n_expert = hp_.n_expert, k = hp_.n_expert_used;
    // Router: probabilities over the experts, the top k (ties to the lower id), renormalised.
    mm.set_activations(x, n, n_embd);
    kernels::matmul(L.ffn_gate_inp.view(), mm, probs_.data(), pool);
    kernels::softmax(probs_.data(), probs_.data(), n, n_expert);
    std::vector<int32_t> & order = order_;
    for (int32_t t = 0; t < n; ++t) {
        const float * p = probs_.data() + static_cast<size_t>(t) * n_expert;
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          [&](int32_t a, int32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
        double sum_d = 0.0;   // ggml's row sum, in double
        for (int32_t j = 0; j < k; ++j) sum_d += p[order[static_cast<size_t>(j)]];
        const float sum = std::max(static_cast<float>(sum_d), 6.103515625e-5f);   // llama.cpp's clamp (an fp16 epsilon)
        for (int32_t j = 0; j < k; ++j) {
            picks_[static_cast<size_t>(t) * k + j] = order[static_cast<size_t>(j)];
            weights_[static_cast<size_t>(t) * k + j] = p[order[static_cast<size_t>(j)]] / sum;
        }
    }
    // Each expert over the tokens that picked it: gather, SwiGLU FFN, scatter to the pick's slot.
    for (int32_t e = 0; e < n_expert; ++e) {
        int32_t m = 0;
        for (int32_t s = 0; s < n * k; ++s) {
            if (picks_[static_cast<size_t>(s)] != e) continue;
            std::memcpy(xg_.data() + static_cast<size_t>(m) * n_embd, x + static_cast<size_t>(s / k) * n_embd,
                        sizeof(float) * static_cast<size_t>(n_embd));
            rows_[static_cast<size_t>(m++)] = s;
        }
        if (m == 0) continue;
        mm.set_activations(xg_.data(), m, n_embd);
        const kernels::weight_view gate_up[] = {expert_view(L.ffn_gate_exps, e, n_ff), expert_view(L.ffn_up_exps, e, n_ff)};
        float * const ys[] = {gate_.data(), up_.data()};
        kernels::matmul_group(gate_up, mm, ys, pool);
        kernels::swiglu(gate_.data(), up_.data(), gate_.data(), static_cast<size_t>(m) * n_ff);
        mm.set_activations(gate_.data(), m, n_ff);
        kernels::matmul(expert_view(L.ffn_down_exps, e, n_embd), mm, down_.data(), pool);
        for (int32_t r = 0; r < m; ++r) {
            const int32_t s = rows_[static_cast<size_t>(r)];
            const float w = weights_[static_cast<size_t>(s)];
            const float * d = down_.data() + static_cast<size_t>(r) * n_embd;
            float * slot = slots_.data() + static_cast<size_t>(s) * n_embd;
            for (int32_t i = 0; i < n_embd; ++i) slot[i] = d[i] * w;
        }
    }
    // Sum each token's picks in pick order, as llama.cpp adds them.
    for (int32_t t = 0; t < n; ++t) {
        float * o = out + static_cast<size_t>(t) * n_embd;
        const float * s0 = slots_.data() + static_cast<size_t>(t) * k * n_embd;
        std::memcpy(o, s0, sizeof(float) * static_cast<size_t>(n_embd));
        for (int32_t j = 1; j < k; ++j) kernels::add(o, s0 + static_cast<size_t>(j) * n_embd, o, static_cast<size_t>(n_embd));
    }
}

}  // namespace hearth::inference
