#include "inference/engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/ops.h"
#include "kernels/quant.h"

namespace hearth::inference {
namespace {

kernels::weight_view view(const weight & w) {
    return kernels::weight_view{w.type, w.data, w.n_rows, w.n_cols, w.row_bytes};
}

void add_bias(float * y, const float * b, int32_t n_tokens, int32_t width) {
    if (b) kernels::add_row(y, b, n_tokens, width);
}

// y *= s over n values (ggml_scale: one f32 product each); nothing when s is 1.
void scale(float * y, float s, size_t n) {
    if (s == 1.0f) return;
    for (size_t i = 0; i < n; ++i) y[i] *= s;
}

// fn(t0, t1) over the batch's tokens: on the pool in chunks of 16 tokens for a prefill batch
// (the row-wise ops between the matmuls ran on one thread while the other waited: pp512 with an
// f16 cache, 2 threads, median of three alternating runs 292 -> 311 t/s), on the calling thread
// for a few tokens, where a parallel op's fixed cost would show. Each token's row is computed
// alone, so the chunks change no result.
template <class F>
void for_token_chunks(kernels::thread_pool & pool, int32_t n, F && fn) {
    constexpr int32_t k_chunk = 16;
    if (n < 2 * k_chunk) {
        fn(0, n);
        return;
    }
    pool.parallel_for((n + k_chunk - 1) / k_chunk, [&](int64_t c, int) {
        const auto t0 = static_cast<int32_t>(c) * k_chunk;
        fn(t0, std::min(n, t0 + k_chunk));
    });
}

}  // namespace

engine::engine(const model & m, kernels::thread_pool & pool, int32_t n_batch)
    : model_(m), pool_(pool), n_batch_(n_batch) {
    const hparams & hp = m.hp();
    const size_t nb = static_cast<size_t>(n_batch);
    x_.resize(nb * hp.n_embd);
    cur_.resize(nb * std::max(hp.n_embd, hp.n_embd_q()));
    q_.resize(nb * hp.n_embd_q());
    k_.resize(nb * hp.n_embd_kv());
    v_.resize(nb * hp.n_embd_kv());
    attn_.resize(nb * std::max(hp.n_embd, hp.n_embd_q()));   // also the expert FFN's output
    gate_.resize(nb * hp.n_ff);
    up_.resize(nb * hp.n_ff);
    pos_.resize(nb);
    n_kv_.resize(nb);
    kv_start_.resize(nb);
    if (hp.n_expert > 0) moe_.emplace(hp, n_batch);
}

kv_cache engine::make_cache(kv_types types, int32_t n_ctx) const {
    const hparams & hp = model_.hp();
    return kv_cache(types, hp.n_layer, hp.n_embd_kv(), n_ctx);
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
    mm_.set_step_order(true);
    auto s = eval_at(cache, tokens, cache.n_pos(), logits, true, std::move(stop));
    step_order_ = false;
    mm_.set_step_order(false);
    return s;
}

// One batch of n tokens through every layer: the forward pass as one story.
status engine::eval_batch(kv_cache & cache, const token_id * tokens, int32_t n, int32_t n_past, float * logits,
                        bool all_logits, const std::stop_token & stop) {
    const hparams & hp = model_.hp();
    const int32_t n_embd = hp.n_embd, n_q = hp.n_embd_q(), n_kv = hp.n_embd_kv(), n_ff = hp.n_ff;
    for (int32_t t = 0; t < n; ++t) {
        pos_[t] = n_past + t;
        n_kv_[t] = n_past + t + 1;  // causal: a token sees itself and everything before it
    }

    // x = token embeddings
    const weight & embd = model_.token_embd();
    for (int32_t t = 0; t < n; ++t) {
        const auto * row = static_cast<const uint8_t *>(embd.data) + static_cast<size_t>(tokens[t]) * embd.row_bytes;
        kernels::dequantize_row(embd.type, row, x_.data() + static_cast<size_t>(t) * n_embd, n_embd);
    }
    const auto observe = [&](std::string_view name, int32_t il, float * data, int32_t width) {
        if (observer_) observer_(name, il, data, n, width);
    };
    // cur = norm(x), row by row: RMS norm, or LayerNorm with its bias.
    const auto norm_input = [&](const float * w, const float * b) {
        for_token_chunks(pool_, n, [&](int32_t t0, int32_t t1) {
            const size_t o = static_cast<size_t>(t0) * n_embd;
            if (hp.norm == norm_kind::layer)
                kernels::layer_norm(x_.data() + o, w, b, cur_.data() + o, t1 - t0, n_embd, hp.rms_eps);
            else
                kernels::rms_norm(x_.data() + o, w, cur_.data() + o, t1 - t0, n_embd, hp.rms_eps);
        });
    };
    // cur = norm(cur) in place, row by row (gemma3's norms after the attention and the FFN).
    const auto norm_rows = [&](const float * w) {
        for_token_chunks(pool_, n, [&](int32_t t0, int32_t t1) {
            float * c = cur_.data() + static_cast<size_t>(t0) * n_embd;
            kernels::rms_norm(c, w, c, t1 - t0, n_embd, hp.rms_eps);
        });
    };
    observe("embd", -1, x_.data(), n_embd);
    if (hp.embd_scale != 1.0f) {
        scale(x_.data(), hp.embd_scale, static_cast<size_t>(n) * n_embd);
        observe("inp_scaled", -1, x_.data(), n_embd);
    }
    // Sliding-window layers: token t sees the n_swa positions up to its own.
    for (int32_t t = 0; t < n; ++t) kv_start_[t] = std::max(0, pos_[t] - hp.n_swa + 1);
    // Rows on a device that will not run this batch come home first (the CPU runs every layer).
    const bool on_device = device_ && device_->takes_cache(cache.types());
    if (cache.device_rows() && !on_device)
        if (status s = cache.bring_home(); !s) return s;

    for (int32_t il = 0; il < hp.n_layer; ++il) {
        // Between layers: what a stop abandons is this batch, whose positions are not counted yet.
        if (stop.stop_requested()) return fail("stopped");
        // The device's layers, all at once: the residual stream goes there and back.
        if (device_ && il == device_->first_layer() && device_->takes_cache(cache.types())) {
            const status s = device_->eval_layers(x_.data(), n, pos_.data(), n_kv_.data(), kv_start_.data(), cache);
            if (s) break;
            device_error_ = device_->describe() + ": " + s.message() + "; running on the CPU";
            device_.reset();
            if (status home = cache.bring_home(); !home) return fail(device_error_, "; ", home.message());
        }
        const layer & L = model_.layers()[il];
        const kernels::rope_params rope = hp.rope_for_layer(il, cache.n_ctx());

        // attention block: cur = norm(x); q, k, v = projections; rotate; store k, v; attend
        norm_input(L.attn_norm, L.attn_norm_b);
        observe("attn_norm", il, cur_.data(), n_embd);
        mm_.set_activations(cur_.data(), n, n_embd);  // quantized once for Q, K and V
        {
            const kernels::weight_view qkv[] = {view(L.wq), view(L.wk), view(L.wv)};
            float * const out[] = {q_.data(), k_.data(), v_.data()};
            kernels::matmul_group(qkv, mm_, out, pool_);
        }
        observe("Qcur", il, q_.data(), n_q);
        observe("Kcur", il, k_.data(), n_kv);
        observe("Vcur", il, v_.data(), n_kv);
        for_token_chunks(pool_, n, [&](int32_t t0, int32_t t1) {
            add_bias(q_.data() + static_cast<size_t>(t0) * n_q, L.bq, t1 - t0, n_q);
            add_bias(k_.data() + static_cast<size_t>(t0) * n_kv, L.bk, t1 - t0, n_kv);
            add_bias(v_.data() + static_cast<size_t>(t0) * n_kv, L.bv, t1 - t0, n_kv);
        });
        observe("Qcur_bias", il, q_.data(), n_q);
        observe("Kcur_bias", il, k_.data(), n_kv);
        observe("Vcur_bias", il, v_.data(), n_kv);
        if (L.q_norm) {   // each head of Q and K normed on its own (qwen3, gemma3)
            for_token_chunks(pool_, n, [&](int32_t t0, int32_t t1) {
                float * q = q_.data() + static_cast<size_t>(t0) * n_q;
                float * k = k_.data() + static_cast<size_t>(t0) * n_kv;
                kernels::rms_norm(q, L.q_norm, q, int64_t{t1 - t0} * hp.n_head, hp.head_dim, hp.rms_eps);
                kernels::rms_norm(k, L.k_norm, k, int64_t{t1 - t0} * hp.n_head_kv, hp.head_dim, hp.rms_eps);
            });
            observe("Qcur_normed", il, q_.data(), n_q);
            observe("Kcur_normed", il, k_.data(), n_kv);
        }
        for_token_chunks(pool_, n, [&](int32_t t0, int32_t t1) {
            kernels::rope(q_.data() + static_cast<size_t>(t0) * n_q, t1 - t0, hp.n_head, hp.head_dim, pos_.data() + t0, rope);
            kernels::rope(k_.data() + static_cast<size_t>(t0) * n_kv, t1 - t0, hp.n_head_kv, hp.head_dim, pos_.data() + t0, rope);
        });
        observe("Qcur_rope", il, q_.data(), n_q);
        observe("Kcur_rope", il, k_.data(), n_kv);
        if (hp.q_scale != 1.0f) {
            scale(q_.data(), hp.q_scale, static_cast<size_t>(n) * n_q);
            observe("Qcur_scaled", il, q_.data(), n_q);
        }
        for_token_chunks(pool_, n, [&](int32_t t0, int32_t t1) {
            for (int32_t t = t0; t < t1; ++t) {
                kernels::quantize_row(cache.types().k, k_.data() + static_cast<size_t>(t) * n_kv, cache.k_row(il, pos_[t]), n_kv);
                kernels::quantize_row(cache.types().v, v_.data() + static_cast<size_t>(t) * n_kv, cache.v_row(il, pos_[t]), n_kv);
            }
        });
        const kernels::kv_view kv{{cache.types().k, cache.k_data(il), cache.row_bytes(kv_half::k)},
                                  {cache.types().v, cache.v_data(il), cache.row_bytes(kv_half::v)}};
        kernels::attention(q_.data(), n, n_kv_.data(), kv, hp.n_head, hp.n_head_kv, hp.head_dim, hp.kq_scale,
                           attn_.data(), pool_, hp.is_swa(il) ? kv_start_.data() : nullptr, step_order_);
        observe("kqv_out", il, attn_.data(), n_q);
        mm_.set_activations(attn_.data(), n, n_q);
        kernels::matmul(view(L.wo), mm_, cur_.data(), pool_);
        if (L.bo) {
            for_token_chunks(pool_, n, [&](int32_t t0, int32_t t1) {
                add_bias(cur_.data() + static_cast<size_t>(t0) * n_embd, L.bo, t1 - t0, n_embd);
            });
        }
        observe("attn_out", il, cur_.data(), n_embd);
        if (L.attn_post_norm) {
            norm_rows(L.attn_post_norm);
            observe("attn_post_norm", il, cur_.data(), n_embd);
        }
        scale(cur_.data(), hp.residual_scale, static_cast<size_t>(n) * n_embd);   // granite
        for_token_chunks(pool_, n, [&](int32_t t0, int32_t t1) {
            const size_t o = static_cast<size_t>(t0) * n_embd;
            kernels::add(x_.data() + o, cur_.data() + o, static_cast<size_t>(t1 - t0) * n_embd);
        });
        observe("ffn_inp", il, x_.data(), n_embd);
        if (stop.stop_requested()) return fail("stopped");   // and between a layer's two blocks

        // feed-forward block: x += down(silu(gate(norm(x))) * up(norm(x)))
        norm_input(L.ffn_norm, L.ffn_norm_b);
        observe("ffn_norm", il, cur_.data(), n_embd);
        mm_.set_activations(cur_.data(), n, n_embd);  // shared by gate and up
        if (L.ffn_gate_inp.data) {   // experts (qwen3moe): cur = moe(cur), by way of attn_ (free here)
            moe_->eval(L, cur_.data(), n, attn_.data(), mm_, pool_);
            std::memcpy(cur_.data(), attn_.data(), sizeof(float) * static_cast<size_t>(n) * n_embd);
        } else if (L.w_gate.data) {
            const kernels::weight_view gate_up[] = {view(L.w_gate), view(L.w_up)};
            float * const out[] = {gate_.data(), up_.data()};
            kernels::matmul_group(gate_up, mm_, out, pool_);
            observe("ffn_gate", il, gate_.data(), n_ff);
            observe("ffn_up", il, up_.data(), n_ff);
            for_token_chunks(pool_, n, [&](int32_t t0, int32_t t1) {
                const size_t o = static_cast<size_t>(t0) * n_ff, len = static_cast<size_t>(t1 - t0) * n_ff;
                if (hp.act == ffn_activation::gelu) {
                    kernels::gelu(gate_.data() + o, gate_.data() + o, len);
                    kernels::mul(gate_.data() + o, up_.data() + o, len);
                } else {
                    kernels::swiglu(gate_.data() + o, up_.data() + o, gate_.data() + o, len);
                }
            });
            observe(hp.act == ffn_activation::gelu ? "ffn_geglu" : "ffn_swiglu", il, gate_.data(), n_ff);
        } else {
            // No gate (starcoder2): gate_ = act(up(x) + b_up), the down projection's input.
            kernels::matmul(view(L.w_up), mm_, up_.data(), pool_);
            for_token_chunks(pool_, n, [&](int32_t t0, int32_t t1) {
                const size_t o = static_cast<size_t>(t0) * n_ff, len = static_cast<size_t>(t1 - t0) * n_ff;
                add_bias(up_.data() + o, L.b_up, t1 - t0, n_ff);
                if (hp.act == ffn_activation::gelu) kernels::gelu(up_.data() + o, gate_.data() + o, len);
                else kernels::silu(up_.data() + o, gate_.data() + o, len);
            });
            observe("ffn_up", il, up_.data(), n_ff);
            observe(hp.act == ffn_activation::gelu ? "ffn_gelu" : "ffn_silu", il, gate_.data(), n_ff);
        }
        if (!L.ffn_gate_inp.data) {
            mm_.set_activations(gate_.data(), n, n_ff);
            kernels::matmul(view(L.w_down), mm_, cur_.data(), pool_);
        }
        if (L.b_down) {
            for_token_chunks(pool_, n, [&](int32_t t0, int32_t t1) {
                add_bias(cur_.data() + static_cast<size_t>(t0) * n_embd, L.b_down, t1 - t0, n_embd);
            });
        }
        observe("ffn_out", il, cur_.data(), n_embd);
        if (L.ffn_post_norm) {
            norm_rows(L.ffn_post_norm);
            observe("ffn_post_norm", il, cur_.data(), n_embd);
        }
        scale(cur_.data(), hp.residual_scale, static_cast<size_t>(n) * n_embd);   // granite
        for_token_chunks(pool_, n, [&](int32_t t0, int32_t t1) {
            const size_t o = static_cast<size_t>(t0) * n_embd;
            kernels::add(x_.data() + o, cur_.data() + o, static_cast<size_t>(t1 - t0) * n_embd);
        });
        observe("l_out", il, x_.data(), n_embd);
    }
    cache.set_n_pos(std::max(cache.n_pos(), n_past + n));
    if (!logits) return {};

    // logits = output(norm(x)), for the last token only unless every position is wanted
    const int32_t first = all_logits ? 0 : n - 1;
    const int32_t n_out = n - first;
    if (hp.norm == norm_kind::layer)
        kernels::layer_norm(x_.data() + static_cast<size_t>(first) * n_embd, model_.output_norm(), model_.output_norm_b(),
                            cur_.data(), n_out, n_embd, hp.rms_eps);
    else
        kernels::rms_norm(x_.data() + static_cast<size_t>(first) * n_embd, model_.output_norm(), cur_.data(), n_out,
                          n_embd, hp.rms_eps);
    if (observer_) observer_("result_norm", -1, cur_.data(), n_out, n_embd);
    mm_.set_activations(cur_.data(), n_out, n_embd);
    kernels::matmul(view(model_.output()), mm_, logits, pool_);
    scale(logits, hp.logit_scale, static_cast<size_t>(n_out) * hp.n_vocab);   // granite
    if (observer_) observer_("result_output", -1, logits, n_out, hp.n_vocab);
    return {};
}

}  // namespace hearth::inference
