#include "inference/graph/cpu_layers.h"

#include <algorithm>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/ops.h"
#include "kernels/quant.h"

namespace hearth::inference {
namespace {

// fn(t0, t1) over n tokens: on the pool in chunks of 16 tokens for a prefill batch (the row-wise
// ops between the matmuls ran on one thread while the other waited: pp512 with an f16 cache, 2
// threads, median of three alternating runs 292 -> 311 t/s), on the calling thread for a few
// tokens, where a parallel op's fixed cost would show. Each token's row is computed alone, so
// the chunks change no result.
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

template <class F>
void cpu_layers::chunks(F && fn) {
    for_token_chunks(pool_, n_, fn);
}

cpu_layers::cpu_layers(const model & m, const k_smoothing & smoothing, kernels::thread_pool & pool, int32_t n_batch)
    : hp_(m.hp()), smoothing_(smoothing), pool_(pool) {
    const auto nb = static_cast<size_t>(n_batch);
    for (int i = 0; i < k_act_count; ++i)
        if (static_cast<act>(i) != act::logits) bufs_[i].resize(nb * static_cast<size_t>(act_width(hp_, static_cast<act>(i))));
    // cur takes the attention output's width too, and attn the expert FFN's output.
    const auto wide = nb * static_cast<size_t>(std::max(hp_.n_embd, hp_.n_embd_q()));
    buf(act::cur).resize(wide);
    buf(act::attn).resize(wide);
    if (hp_.n_expert > 0) moe_.emplace(hp_, n_batch);
}

void cpu_layers::begin(int32_t n, const int32_t * pos, const int32_t * n_kv, const int32_t * kv_start,
                       kv_cache & cache, bool step_order, const activation_observer * observer) {
    n_ = n;
    row0_ = 0;
    logits_ = nullptr;
    pos_ = pos;
    n_kv_ = n_kv;
    kv_start_ = kv_start;
    cache_ = &cache;
    step_order_ = step_order;
    observer_ = observer && *observer ? observer : nullptr;
}

void cpu_layers::select_output(float * logits, int32_t first, int32_t n) {
    logits_ = logits;
    row0_ = first;
    n_ = n;
}

void cpu_layers::norm(act in, act out, const float * w, const float * b) {
    const int64_t n_embd = hp_.n_embd;
    chunks([&](int32_t t0, int32_t t1) {
        const float * x = data(in) + offset(in, t0);
        float * y = data(out) + offset(out, t0);
        if (hp_.norm == norm_kind::layer) kernels::layer_norm(x, w, b, y, t1 - t0, n_embd, hp_.rms_eps);
        else kernels::rms_norm(x, w, y, t1 - t0, n_embd, hp_.rms_eps);
    });
}

void cpu_layers::norm_rows(act a, const float * w, int64_t width) {
    const int64_t per_token = act_width(hp_, a) / width;
    chunks([&](int32_t t0, int32_t t1) {
        float * x = data(a) + offset(a, t0);
        kernels::rms_norm(x, w, x, int64_t{t1 - t0} * per_token, width, hp_.rms_eps);
    });
}

void cpu_layers::products(act in, std::span<const product> ps) {
    mm_.set_activations(data(in), n_, act_width(hp_, in));   // quantized once for all of them
    kernels::weight_view ws[kernels::k_max_group];
    float * ys[kernels::k_max_group];
    for (size_t i = 0; i < ps.size(); ++i) {
        ws[i] = ps[i].w->view();
        ys[i] = data(ps[i].out);
    }
    kernels::matmul_group(std::span(ws, ps.size()), mm_, std::span<float * const>(ys, ps.size()), pool_);
}

void cpu_layers::add_bias(act a, const float * b) {
    if (!b) return;
    const int64_t width = act_width(hp_, a);
    chunks([&](int32_t t0, int32_t t1) { kernels::add_row(data(a) + offset(a, t0), b, t1 - t0, width); });
}

void cpu_layers::rope(act a, int64_t n_head, const kernels::rope_params & p) {
    chunks([&](int32_t t0, int32_t t1) {
        kernels::rope(data(a) + offset(a, t0), t1 - t0, n_head, hp_.head_dim, pos_ + t0, p);
    });
}

// ggml_scale: one f32 product each, on the calling thread.
void cpu_layers::scale(act a, float s) {
    float * y = data(a);
    const size_t n = static_cast<size_t>(n_) * static_cast<size_t>(act_width(hp_, a));
    for (size_t i = 0; i < n; ++i) y[i] *= s;
}

void cpu_layers::attention(int32_t il, bool sliding) {
    kv_cache & cache = *cache_;
    const int64_t n_kv = hp_.n_embd_kv();
    // A smoothed cache holds k / s, and the scores take q * s (k_smoothing.h); k and q are not
    // read after the attention.
    const float * s = cache.k_smoothed() ? smoothing_.scales(il) : nullptr;
    chunks([&](int32_t t0, int32_t t1) {
        if (s) {
            k_smoothing::divide_keys(data(act::k) + offset(act::k, t0), s, t1 - t0, n_kv);
            k_smoothing::multiply_queries(data(act::q) + offset(act::q, t0), s, t1 - t0, hp_.n_head, hp_.n_head_kv,
                                          hp_.head_dim);
        }
        for (int32_t t = t0; t < t1; ++t) {
            kernels::quantize_row(cache.types().k, data(act::k) + offset(act::k, t), cache.k_row(il, pos_[t]), n_kv);
            kernels::quantize_row(cache.types().v, data(act::v) + offset(act::v, t), cache.v_row(il, pos_[t]), n_kv);
        }
    });
    const kernels::kv_view kv{{cache.types().k, cache.k_data(il), cache.row_bytes(kv_half::k)},
                              {cache.types().v, cache.v_data(il), cache.row_bytes(kv_half::v)}};
    kernels::attention(data(act::q), n_, n_kv_, kv, hp_.n_head, hp_.n_head_kv, hp_.head_dim, hp_.kq_scale,
                       data(act::attn), pool_, sliding ? kv_start_ : nullptr, step_order_);
}

void cpu_layers::add(act dst, act src) {
    const int64_t width = act_width(hp_, dst);
    chunks([&](int32_t t0, int32_t t1) {
        kernels::add(data(dst) + offset(dst, t0), data(src) + offset(src, t0), static_cast<size_t>((t1 - t0) * width));
    });
}

void cpu_layers::gated(act gate, act up, ffn_activation f) {
    const int64_t width = act_width(hp_, gate);
    chunks([&](int32_t t0, int32_t t1) {
        float * g = data(gate) + offset(gate, t0);
        const float * u = data(up) + offset(up, t0);
        const auto len = static_cast<size_t>((t1 - t0) * width);
        if (f == ffn_activation::gelu) {
            kernels::gelu(g, g, len);
            kernels::mul(g, u, len);
        } else {
            kernels::swiglu(g, u, g, len);
        }
    });
}

void cpu_layers::activation(act in, act out, ffn_activation f) {
    const int64_t width = act_width(hp_, in);
    chunks([&](int32_t t0, int32_t t1) {
        const float * x = data(in) + offset(in, t0);
        float * y = data(out) + offset(out, t0);
        const auto len = static_cast<size_t>((t1 - t0) * width);
        if (f == ffn_activation::gelu) kernels::gelu(x, y, len);
        else kernels::silu(x, y, len);
    });
}

// By way of attn (free here): the expert block's output may not alias its input.
void cpu_layers::experts(const layer & L, act in, act out) {
    moe_->eval(L, data(in), n_, data(act::attn), mm_, pool_);
    std::memcpy(data(out), data(act::attn), sizeof(float) * static_cast<size_t>(n_) * static_cast<size_t>(hp_.n_embd));
}

void cpu_layers::observe(std::string_view name, int32_t il, act a) {
    if (observer_) (*observer_)(name, il, data(a), n_, static_cast<int32_t>(act_width(hp_, a)));
}

}  // namespace hearth::inference
