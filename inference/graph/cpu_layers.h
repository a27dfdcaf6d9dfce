// cpu_layers: the layer graph's executor on the CPU (layer_graph.h), over kernels/: each
// operation as llama.cpp computes it, so the CPU's results are llama.cpp's to the bit. Row-wise
// operations run on the pool in chunks of tokens for a prefill batch; the products share one
// quantization of their input (matmul_context). The activations are [n_batch][width] buffers
// sized once, so a batch allocates nothing in steady state.
// Thread-safety: one per engine (the compute worker); not reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "inference/cache/k_smoothing.h"
#include "inference/cache/kv_cache.h"
#include "inference/graph/layer_graph.h"
#include "inference/graph/moe.h"
#include "inference/model/model.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace hearth::inference {

// Sees each named intermediate (engine::set_observer): name, layer (-1 outside the layers),
// n_tokens rows of width floats, which it may overwrite.
using activation_observer = std::function<void(std::string_view name, int32_t layer, float * data, int32_t n_tokens,
                                               int32_t width)>;

class cpu_layers final : public layer_executor {
public:
    // smoothing: the model's K scales, applied to a cache that stores smoothed keys; outlives this.
    cpu_layers(const model & m, const k_smoothing & smoothing, kernels::thread_pool & pool, int32_t n_batch);

    // The batch the next operations run on: n tokens, their positions, visible lengths and
    // window starts ([n] each, as the engine keeps them), over cache. step_order: every row
    // summed in the one-token order (engine::eval_steps). observer: may be empty.
    void begin(int32_t n, const int32_t * pos, const int32_t * n_kv, const int32_t * kv_start, kv_cache & cache,
               bool step_order, const activation_observer * observer);

    // Narrows the batch to its rows [first, first + n) for the output block, whose logits go to
    // `logits` ([n][n_vocab]); begin() widens it again.
    void select_output(float * logits, int32_t first, int32_t n);

    float * data(act a) {
        return a == act::logits ? logits_ : buf(a).data() + static_cast<size_t>(row0_) * static_cast<size_t>(act_width(hp_, a));
    }
    kernels::matmul_context & mm() { return mm_; }

    void norm(act in, act out, const float * w, const float * b) override;
    void norm_rows(act a, const float * w, int64_t width) override;
    void products(act in, std::span<const product> ps) override;
    void add_bias(act a, const float * b) override;
    void rope(act a, int64_t n_head, const kernels::rope_params & p) override;
    void scale(act a, float s) override;
    void attention(int32_t il, bool sliding) override;
    void add(act dst, act src) override;
    void gated(act gate, act up, ffn_activation f) override;
    void activation(act in, act out, ffn_activation f) override;
    void experts(const layer & L, act in, act out) override;
    void observe(std::string_view name, int32_t il, act a) override;

private:
    std::vector<float> & buf(act a) { return bufs_[static_cast<size_t>(a)]; }
    size_t offset(act a, int32_t t) const { return static_cast<size_t>(t) * static_cast<size_t>(act_width(hp_, a)); }
    // fn(t0, t1) over the batch's tokens (for_token_chunks in cpu_layers.cpp).
    template <class F>
    void chunks(F && fn);

    const hparams & hp_;
    const k_smoothing & smoothing_;
    kernels::thread_pool & pool_;
    kernels::matmul_context mm_;
    std::vector<float> bufs_[k_act_count];   // [n_batch][act_width] each (cur and attn wider: see the constructor;
                                             // none for logits, which are the caller's)
    std::optional<moe_block> moe_;           // the expert FFN's scratch (models with experts)
    // The batch (begin()).
    int32_t n_ = 0;
    int32_t row0_ = 0;            // the first row of the batch the operations see (select_output)
    float * logits_ = nullptr;    // the output block's logits (select_output)
    const int32_t * pos_ = nullptr;
    const int32_t * n_kv_ = nullptr;
    const int32_t * kv_start_ = nullptr;
    kv_cache * cache_ = nullptr;
    bool step_order_ = false;
    const activation_observer * observer_ = nullptr;
};

}  // namespace hearth::inference
