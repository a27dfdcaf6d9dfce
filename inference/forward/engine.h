// engine: the forward pass of a model over one sequence's KV cache. eval() takes a batch of
// new tokens that follow the cache's valid positions, writes their K and V into the cache,
// and returns the logits of the last token (or of every token). Prompts longer than the
// batch size are evaluated in consecutive batches. Activations live in scratch buffers owned
// by the engine and sized once, so a forward pass allocates nothing in steady state.
// Thread-safety: one engine per compute worker; eval() is not reentrant. The model and the
// thread pool must outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stop_token>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "inference/cache/kv_cache.h"
#include "inference/device/layer_device.h"
#include "inference/graph/cpu_layers.h"
#include "inference/model/model.h"
#include "kernels/thread_pool.h"

namespace hearth::inference {

using token_id = int32_t;

class engine {
public:
    engine(const model & m, kernels::thread_pool & pool, int32_t n_batch = 256);
    // Stays put: its CPU executor holds a reference to its smoothing.
    engine(const engine &) = delete;
    engine & operator=(const engine &) = delete;

    const model & mdl() const { return model_; }
    int32_t n_batch() const { return n_batch_; }

    // A cache shaped for this model. A quantized K stores smoothed keys where the model has K
    // scales (k_smoothing.h), unless smooth_k is false (for comparing the two); the CPU's layers
    // and a device's read either.
    kv_cache make_cache(kv_types types, int32_t n_ctx, bool smooth_k = true) const;
    const k_smoothing & smoothing() const { return smoothing_; }

    // Evaluates tokens at positions [cache.n_pos(), cache.n_pos() + tokens.size()).
    // logits: n_vocab floats for the last token, or tokens.size() * n_vocab with all_logits.
    // Errors: a token id outside the vocabulary, or the cache's context is full.
    // Cancellation: `stop` is checked before each layer and between its attention and
    // feed-forward blocks, and a stoppable prompt runs in batches of k_stoppable_batch, so a
    // requested stop ends the call within about half a layer of a small batch: milliseconds. It then returns an error saying so (callers tell it
    // from a failure by stop.stop_requested()), the cache's n_pos ends after the last batch
    // that completed, every row before it final, and `logits` hold nothing. Not stopped, the
    // result is bit for bit what it is without a stop token.
    status eval(kv_cache & cache, std::span<const token_id> tokens, std::vector<float> & logits,
                bool all_logits = false, std::stop_token stop = {});

    // Evaluates tokens at positions [start_pos, start_pos + tokens.size()) with start_pos <=
    // cache.n_pos(): a token at p attends to rows [0, p] only, so valid rows past the batch
    // (a chunk moved there by kv_shift) are neither read nor touched. n_pos becomes
    // max(n_pos, start_pos + tokens.size()). logits as eval() gives them. Stopped, n_pos is
    // max(n_pos, the end of the last completed batch); the rows of the batch it stopped in,
    // and of the ones after it, hold garbage.
    status eval_at(kv_cache & cache, std::span<const token_id> tokens, int32_t start_pos, std::vector<float> & logits,
                   bool all_logits = false, std::stop_token stop = {});

    // Evaluates tokens at positions [cache.n_pos(), ...) as tokens.size() consecutive decode
    // steps would, in one batch: every row summed in the one-token order (matmul.h, attention.h),
    // so `logits` (tokens.size() * n_vocab, every row) and the K/V rows are bit for bit those of
    // one eval() per token, while the weights are read once for the batch. For verifying
    // speculated tokens (speculate.h). Errors and stopping as eval().
    status eval_steps(kv_cache & cache, std::span<const token_id> tokens, std::vector<float> & logits,
                      std::stop_token stop = {});

    // Sees each intermediate activation of eval(): its name (llama.cpp's graph names, e.g.
    // "attn_norm", "Qcur", "kqv_out", "l_out"; a suffix marks a later step on the same tensor,
    // "Qcur_bias", "Qcur_rope"), the layer (-1 outside the layers) and n_tokens rows of width
    // floats, valid during the call. The observer may overwrite them: the forward pass goes on
    // from what it leaves, so another implementation's values can be fed in to test one step
    // at a time. For comparing intermediates; unset (the default) it costs one branch per step.
    using observer = activation_observer;
    void set_observer(observer obs) { observer_ = std::move(obs); }

    // Runs the last layers on a device from now on (layer_device.h); nullptr: all on the CPU. A
    // cache type the device does not take runs on the CPU; a device that fails is dropped (the
    // batch goes on on the CPU, device_error() says why). The device's layers are one step for
    // a stop (checked before them) and for the observer (which sees none of their activations).
    // The KV rows of the device's layers live on the device (kv_cache::device_rows); a cache the
    // CPU must run whole brings them home first.
    void set_layer_device(std::unique_ptr<layer_device> d) { device_ = std::move(d); }
    const layer_device * device() const { return device_.get(); }
    const std::string & device_error() const { return device_error_; }

    // The batch a stoppable prompt is cut into: a stop lands within one layer of it.
    static constexpr int32_t k_stoppable_batch = 32;

private:
    // An error: stopped between two layers (the cache's n_pos is left as it was), or the device
    // failed and the cache's rows on it could not be read back (the cache is cleared).
    status eval_batch(kv_cache & cache, const token_id * tokens, int32_t n, int32_t n_past, float * logits, bool all_logits,
                    const std::stop_token & stop);

    const model & model_;
    kernels::thread_pool & pool_;
    int32_t n_batch_;
    bool step_order_ = false;   // eval_steps() in progress
    k_smoothing smoothing_;     // the model's K scales, for the caches that store smoothed keys
    cpu_layers cpu_;            // the layer graph on the CPU, with the batch's activations
    std::vector<int32_t> pos_;  // [n_batch] positions of the batch's tokens
    std::vector<int32_t> n_kv_; // [n_batch] visible cache positions for each token (causal)
    std::vector<int32_t> kv_start_;  // [n_batch] first visible position on sliding-window layers
    observer observer_;
    std::unique_ptr<layer_device> device_;
    std::string device_error_;
};

}  // namespace hearth::inference
