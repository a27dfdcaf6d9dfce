#include "inference/forward/engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/ops.h"
#include "kernels/quant.h"

namespace hearth::inference {
engine::engine(const model & m, kernels::thread_pool & pool, int32_t n_batch)
    : model_(m), pool_(pool), n_batch_(n_batch), smoothing_(k_smoothing::from_model(m)), cpu_(m, smoothing_, pool, n_batch) {
    const size_t nb = static_cast<size_t>(n_batch);
    pos_.resize(nb);
    n_kv_.resize(nb);
    kv_start_.resize(nb);
}

kv_cache engine::make_cache(kv_types types, int32_t n_ctx, bool smooth_k) const {
    const hparams & hp = model_.hp();
    const bool smoothed = smooth_k && k_smoothing::applies_to(types.k) && !smoothing_.empty();
    return kv_cache(types, hp.n_layer, hp.n_embd_kv(), n_ctx, smoothed);
}

status engine::eval(kv_cache & cache, std::span<const token_id> tokens, std::vector<float> & logits, bool all_logits,
                    std::stop_token stop) {
    return eval_at(cache, tokens, cache.n_pos(), logits, all_logits, std::move(stop));
}

status engine::eval_at(kv_cache & cache, std::span<const token_id> tokens, int32_t start_pos, std::vector<float> & logits,
                       bool all_logits, std::stop_token stop) {
    const hparams & hp = model_.hp();
    if (start_pos < 0 || start_pos > cache.n_pos())
        return fail("eval: start position ", start_pos, " is outside the valid positions [0, ", cache.n_pos(), "]");
    if (tokens.empty()) return fail("eval: no tokens to evaluate");
    for (size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i] < 0 || tokens[i] >= hp.n_vocab)
            return fail("eval: token ", tokens[i], " at index ", i, " is outside the vocabulary [0, ", hp.n_vocab, ")");
    const int64_t end = static_cast<int64_t>(start_pos) + static_cast<int64_t>(tokens.size());
    if (end > cache.n_ctx())
        return fail("eval: ", end, " positions do not fit the context of ", cache.n_ctx(), " tokens");
    cache.reserve(static_cast<int32_t>(end));

    const size_t n_vocab = static_cast<size_t>(hp.n_vocab);
    logits.resize(all_logits ? tokens.size() * n_vocab : n_vocab);
    // Each token's row is computed alone whatever the batch, so the smaller batches of a
    // stoppable call change no result; they bound how long one layer of a batch runs.
    const int32_t n_batch = stop.stop_possible() ? std::min(n_batch_, k_stoppable_batch) : n_batch_;
    for (size_t done = 0; done < tokens.size();) {
        int32_t n = static_cast<int32_t>(std::min<size_t>(n_batch, tokens.size() - done));
        // Never leave a last batch of one token: that one would be summed in the one-token
        // order (attention.h), and a prompt's result would depend on how it was cut.
        if (tokens.size() - done - n == 1 && n > 2) --n;
        const bool last_batch = done + n == tokens.size();
        float * out = all_logits ? logits.data() + done * n_vocab : (last_batch ? logits.data() : nullptr);
        if (status s = eval_batch(cache, tokens.data() + done, n, start_pos + static_cast<int32_t>(done), out, all_logits, stop); !s) {
            if (!stop.stop_requested()) return s;
            return fail("eval: stopped after ", done, " of ", tokens.size(), " tokens");
        }
        done += n;
    }
    return {};
}

status engine::eval_steps(kv_cache & cache, std::span<const token_id> tokens, std::vector<float> & logits,
                          std::stop_token stop) {
    step_order_ = true;
    cpu_.mm().set_step_order(true);
    auto s = eval_at(cache, tokens, cache.n_pos(), logits, true, std::move(stop));
    step_order_ = false;
    cpu_.mm().set_step_order(false);
    return s;
}

// One batch of n tokens through every layer: the forward pass as one story (the layer itself is
// layer_graph.cpp's, run here by the CPU's executor and, for a device's layers, by the device's).
status engine::eval_batch(kv_cache & cache, const token_id * tokens, int32_t n, int32_t n_past, float * logits,
                        bool all_logits, const std::stop_token & stop) {
    const hparams & hp = model_.hp();
    const int32_t n_embd = hp.n_embd;
    for (int32_t t = 0; t < n; ++t) {
        pos_[t] = n_past + t;
        n_kv_[t] = n_past + t + 1;  // causal: a token sees itself and everything before it
    }
    // Sliding-window layers: token t sees the n_swa positions up to its own.
    for (int32_t t = 0; t < n; ++t) kv_start_[t] = std::max(0, pos_[t] - hp.n_swa + 1);
    cpu_.begin(n, pos_.data(), n_kv_.data(), kv_start_.data(), cache, step_order_, &observer_);
    float * x = cpu_.data(act::x);

    // x = token embeddings
    const weight & embd = model_.token_embd();
    for (int32_t t = 0; t < n; ++t) {
        const auto * row = static_cast<const uint8_t *>(embd.data) + static_cast<size_t>(tokens[t]) * embd.row_bytes;
        kernels::dequantize_row(embd.type, row, x + static_cast<size_t>(t) * n_embd, n_embd);
    }
    cpu_.observe("embd", -1, act::x);
    if (hp.embd_scale != 1.0f) {
        cpu_.scale(act::x, hp.embd_scale);
        cpu_.observe("inp_scaled", -1, act::x);
    }
    // Rows on a device that will not run this batch come home first (the CPU runs every layer).
    const bool on_device = device_ && device_->takes_cache(cache.types());
    if (cache.device_rows() && !on_device)
        if (status s = cache.bring_home(); !s) return s;

    // logits = output(norm(x)), for the last token only unless every position is wanted
    const int32_t first = all_logits ? 0 : n - 1;
    bool logits_done = false;   // by a device that runs the output block too
    for (int32_t il = 0; il < hp.n_layer; ++il) {
        // Between layers: what a stop abandons is this batch, whose positions are not counted yet.
        if (stop.stop_requested()) return fail("stopped");
        // The device's layers, all at once: the residual stream goes there and back (or, where
        // it runs every layer and the output, the logits come back instead).
        if (device_ && on_device && il == device_->first_layer()) {
            float * device_logits = device_->runs_output() ? logits : nullptr;
            const status s = device_->eval_layers(x, n, pos_.data(), n_kv_.data(), kv_start_.data(), cache,
                                                  device_logits, first);
            logits_done = s && device_logits;
            if (s) break;
            device_error_ = device_->describe() + ": " + s.message() + "; running on the CPU";
            device_.reset();
            if (status home = cache.bring_home(); !home) return fail(device_error_, "; ", home.message());
        }
        const layer & L = model_.layers()[il];
        attention_block(cpu_, hp, L, il, cache.n_ctx());
        if (stop.stop_requested()) return fail("stopped");   // and between a layer's two blocks
        ffn_block(cpu_, hp, L, il);
    }
    cache.set_n_pos(std::max(cache.n_pos(), n_past + n));
    if (!logits || logits_done) return {};
    cpu_.select_output(logits, first, n - first);
    output_block(cpu_, hp, model_);
    return {};
}

}  // namespace hearth::inference
