#include "inference/device/layer_device.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>


namespace hearth::inference {

using kernels::device_buffer;
using kernels::tensor_type;

layer_device::layer_device(const model & m, int32_t first, bool output, std::shared_ptr<kernels::device_ops> ops)
    : model_(m), ops_(std::move(ops)), first_(first), output_(output && first == 0) {
    const int32_t n_layer = m.hp().n_layer;
    describe_ = ops_->name() + ", layers " + std::to_string(first_) + "-" + std::to_string(n_layer - 1) + " of " +
                std::to_string(n_layer) + (output_ ? " and the output" : "");
}

result<layer_device::buffer_ptr> layer_device::make_from(const void * data, size_t bytes) const {
    auto b = ops_->make_buffer(bytes);
    if (!b) return b.error();
    if (status s = (*b)->upload(data, bytes); !s) return s.error();
    return b;
}

// What the graph uses on the device's layers (layer_needs, output_needs), each uploaded once.
status layer_device::upload_weights() {
    const hparams & hp = model_.hp();
    for (int32_t il = first_; il < hp.n_layer; ++il)
        if (status s = upload(layer_needs(hp, model_.layers()[il], il)); !s) return s;
    if (status s = upload_smoothing(); !s) return s;
    if (output_) return upload(output_needs(model_));
    return {};
}

// The model's K scales as the factors the device multiplies K and Q by (k_smoothing.h).
status layer_device::upload_smoothing() {
    const hparams & hp = model_.hp();
    const k_smoothing smoothing = k_smoothing::from_model(model_);
    key_factors_.resize(static_cast<size_t>(hp.n_layer));
    query_factors_.resize(static_cast<size_t>(hp.n_layer));
    for (int32_t il = first_; il < hp.n_layer; ++il) {
        const auto k = smoothing.key_factors(il);
        if (k.empty()) continue;
        const auto q = smoothing.query_factors(il, hp.n_head, hp.n_head_kv, hp.head_dim);
        auto kb = make_from(k.data(), k.size() * sizeof(float));
        if (!kb) return kb.error();
        auto qb = make_from(q.data(), q.size() * sizeof(float));
        if (!qb) return qb.error();
        key_factors_[static_cast<size_t>(il)] = std::move(*kb);
        query_factors_[static_cast<size_t>(il)] = std::move(*qb);
    }
    return {};
}

status layer_device::upload(const layer_use & use) {
    for (const weight * w : use.weights) {
        if (weights_.contains(w->data)) continue;
        const size_t bytes = static_cast<size_t>(w->n_rows) * w->row_bytes;
        // Read where it is mapped where the device shares the host's memory; else a copy.
        buffer_ptr imported = bytes >= k_import_min_bytes ? ops_->import_host(w->data, bytes) : nullptr;
        if (imported) imported_bytes_ += bytes;
        auto b = imported ? result<buffer_ptr>(std::move(imported)) : make_from(w->data, bytes);
        if (!b) return b.error();
        weights_.emplace(w->data, dev_weight{std::move(*b), w->type, w->n_rows, w->n_cols, w->row_bytes});
    }
    for (const layer_use::vec & v : use.vectors) {
        if (vectors_.contains(v.data)) continue;
        auto b = make_from(v.data, static_cast<size_t>(v.n) * sizeof(float));
        if (!b) return b.error();
        vectors_.emplace(v.data, std::move(*b));
    }
    return {};
}

status layer_device::ensure_capacity(int32_t n, int32_t ctx) {
    const hparams & hp = model_.hp();
    const auto make = [&](buffer_ptr & b, size_t bytes) -> status {
        auto r = ops_->make_buffer(bytes);
        if (!r) return r.error();
        b = std::move(*r);
        return {};
    };
    if (n > n_cap_) {
        const auto f = [&](int64_t width) { return static_cast<size_t>(n) * static_cast<size_t>(width) * sizeof(float); };
        for (int i = 0; i < k_act_count; ++i)
            if (static_cast<act>(i) != act::logits)
                if (status s = make(acts_[static_cast<size_t>(i)], f(act_width(hp, static_cast<act>(i)))); !s) return s;
        for (buffer_ptr * b : {&pos_, &n_kv_, &kv_start_, &no_window_})
            if (status s = make(*b, f(1)); !s) return s;
        int64_t q8_rows = n, widest = std::max({hp.n_embd, hp.n_embd_q(), hp.n_ff});
        if (hp.n_expert > 0) {
            const int64_t k = hp.n_expert_used;
            for (auto [b, width] : {std::pair{&logits_, int64_t{hp.n_expert}}, {&ids_, k}, {&pick_weights_, k},
                                    {&pick_gate_, k * hp.n_ff}, {&pick_up_, k * hp.n_ff}, {&pick_down_, k * hp.n_embd}})
                if (status s = make(*b, f(width)); !s) return s;
            q8_rows = n * k;   // the picks' down products take [n][n_used][n_ff]
        }
        if (status s = make(x_q8_, ops_->q8_0_activation_bytes(q8_rows, widest / 32 * 32)); !s) return s;
        const std::vector<int32_t> zeros(static_cast<size_t>(n), 0);
        if (status s = no_window_->upload(zeros.data(), zeros.size() * sizeof(int32_t)); !s) return s;
        n_cap_ = n;
    }
    const size_t scores = static_cast<size_t>(n_cap_) * hp.n_head * ctx * sizeof(float);
    if (!scores_ || scores_->size() < scores)
        if (status s = make(scores_, scores); !s) return s;
    return {};
}

// The cache's rows of this device's layers: adopted on first sight (the host's valid rows copied
// up, then freed), brought home first where another device holds them.
result<kv_device_rows *> layer_device::rows_of(kv_cache & cache) {
    kv_device_rows * held = cache.device_rows();
    if (held && held->owner() == ops_.get() && held->first_layer() == first_) return held;
    if (held)
        if (status s = cache.bring_home(); !s) return s.error();
    const hparams & hp = model_.hp();
    auto rows = std::make_unique<kv_device_rows>(ops_, first_, hp.n_layer, cache.n_ctx(), cache.row_bytes(kv_half::k),
                                                 cache.row_bytes(kv_half::v));
    if (status s = rows->reserve(cache.n_alloc()); !s) return s.error();
    for (int32_t il = first_; il < hp.n_layer; ++il) {
        if (status s = rows->write(il, kv_half::k, 0, cache.n_pos(), cache.k_data(il)); !s) return s.error();
        if (status s = rows->write(il, kv_half::v, 0, cache.n_pos(), cache.v_data(il)); !s) return s.error();
    }
    kv_device_rows * out = rows.get();
    cache.attach_device_rows(std::move(rows));
    return out;
}

status layer_device::eval_layers(float * x, int32_t n, const int32_t * pos, const int32_t * n_kv,
                                  const int32_t * kv_start, kv_cache & cache, float * logits, int32_t first_logit) {
    const hparams & hp = model_.hp();
    int32_t ctx = pos[0] + n;
    for (int32_t t = 0; t < n; ++t) ctx = std::max(ctx, n_kv[t]);
    auto rows = rows_of(cache);
    if (!rows) return rows.error();
    kv_device_rows & kv = **rows;
    if (status s = kv.reserve(std::max(ctx, cache.n_alloc())); !s) return s;
    if (status s = ensure_capacity(n, kv.n_alloc()); !s) return s;
    const size_t x_bytes = static_cast<size_t>(n) * static_cast<size_t>(hp.n_embd) * sizeof(float);
    for (status s : {acts_[static_cast<size_t>(act::x)]->upload(x, x_bytes),
                     pos_->upload(pos, static_cast<size_t>(n) * sizeof(int32_t)),
                     n_kv_->upload(n_kv, static_cast<size_t>(n) * sizeof(int32_t)),
                     kv_start_->upload(kv_start, static_cast<size_t>(n) * sizeof(int32_t))})
        if (!s) return s;

    n_ = n;
    pos0_ = pos[0];
    n_ctx_ = kv.n_alloc();
    cache_ = &cache;
    rows_ = &kv;
    for (int32_t il = first_; il < hp.n_layer; ++il) {
        const layer & L = model_.layers()[il];
        attention_block(*this, hp, L, il, cache.n_ctx());
        ffn_block(*this, hp, L, il);
    }
    if (status st = ops_->finish(); !st) return st;

    // Only now, with every layer done, the result replaces x (the batch's K/V rows stay on the device).
    if (status s = acts_[static_cast<size_t>(act::x)]->download(x, x_bytes); !s) return s;
    if (output_ && logits) return output(logits, first_logit, n);
    return {};
}

status layer_device::output(float * logits, int32_t first, int32_t n) {
    const hparams & hp = model_.hp();
    const int32_t n_out = n - first;
    const size_t row = static_cast<size_t>(hp.n_embd) * sizeof(float);
    device_buffer & x = *acts_[static_cast<size_t>(act::x)];
    if (first > 0) {   // by way of cur: a copy's two ranges may not overlap
        device_buffer & cur = *acts_[static_cast<size_t>(act::cur)];
        if (status s = ops_->copy(x, static_cast<size_t>(first) * row, cur, 0, static_cast<size_t>(n_out) * row); !s) return s;
        if (status s = ops_->copy(cur, 0, x, 0, static_cast<size_t>(n_out) * row); !s) return s;
    }
    const size_t logits_bytes = static_cast<size_t>(n_out) * static_cast<size_t>(hp.n_vocab) * sizeof(float);
    if (n_out > n_logits_cap_) {
        auto b = ops_->make_buffer(logits_bytes);
        if (!b) return b.error();
        acts_[static_cast<size_t>(act::logits)] = std::move(*b);
        n_logits_cap_ = n_out;
    }
    n_ = n_out;
    output_block(*this, hp, model_);
    if (status st = ops_->finish(); !st) return st;
    return acts_[static_cast<size_t>(act::logits)]->download(logits, logits_bytes);
}

void layer_device::norm(act in, act out, const float * w, const float * b) {
    const hparams & hp = model_.hp();
    if (hp.norm == norm_kind::layer) ops_->layer_norm(buf(in), vec(w), vec(b), buf(out), n_, hp.n_embd, hp.rms_eps);
    else ops_->rms_norm(buf(in), vec(w), buf(out), n_, hp.n_embd, hp.rms_eps);
}

void layer_device::norm_rows(act a, const float * w, int64_t width) {
    ops_->rms_norm(buf(a), vec(w), buf(a), elements(a) / width, width, model_.hp().rms_eps);
}

const device_buffer * layer_device::q8_for(const device_buffer & in, int64_t rows, int64_t width,
                                            std::span<const tensor_type> types) {
    for (tensor_type t : types) {
        if (!ops_->takes_q8_0_activations(t)) continue;
        ops_->quantize_q8_0(in, *x_q8_, rows, width);
        return x_q8_.get();
    }
    return nullptr;
}

// As the CPU's matmul_context, the input's q8_0 form is made once for Q, K and V.
void layer_device::products(act in, std::span<const product> ps) {
    std::array<tensor_type, kernels::k_max_group> types{};
    for (size_t i = 0; i < ps.size(); ++i) types[i] = ps[i].w->type;
    const device_buffer * q8 = q8_for(buf(in), n_, act_width(model_.hp(), in), std::span(types.data(), ps.size()));
    for (const product & p : ps) ops_->matmul(weight_of(*p.w).view(), buf(in), buf(p.out), n_, q8);
}

void layer_device::add_bias(act a, const float * b) {
    if (b) ops_->add(buf(a), *vec(b), buf(a), elements(a), act_width(model_.hp(), a));
}

void layer_device::rope(act a, int64_t n_head, const kernels::rope_params & p) {
    ops_->rope(buf(a), *pos_, n_, n_head, model_.hp().head_dim, p, vec(p.freq_factors));
}

void layer_device::scale(act a, float s) { ops_->scale(buf(a), s, elements(a)); }

void layer_device::attention(int32_t il, bool sliding) {
    const hparams & hp = model_.hp();
    const device_buffer & k_rows = rows_->rows(il, kv_half::k), & v_rows = rows_->rows(il, kv_half::v);
    const kv_types & types = cache_->types();
    // A smoothed cache holds k / s, and the scores take q * s (k_smoothing.h).
    if (const auto & kf = key_factors_[static_cast<size_t>(il)]; kf && cache_->k_smoothed()) {
        ops_->mul(buf(act::k), *kf, buf(act::k), elements(act::k), hp.n_embd_kv());
        ops_->mul(buf(act::q), *query_factors_[static_cast<size_t>(il)], buf(act::q), elements(act::q), hp.n_embd_q());
    }
    ops_->kv_append(types.k, buf(act::k), k_rows, pos0_, n_, hp.n_embd_kv());
    ops_->kv_append(types.v, buf(act::v), v_rows, pos0_, n_, hp.n_embd_kv());
    ops_->attention(types.k, types.v, buf(act::q), k_rows, v_rows, *n_kv_, sliding ? *kv_start_ : *no_window_, *scores_,
                    buf(act::attn), {n_, hp.n_head, hp.n_head_kv, hp.head_dim, n_ctx_, hp.kq_scale});
}

void layer_device::add(act dst, act src) { ops_->add(buf(dst), buf(src), buf(dst), elements(dst), elements(dst)); }

void layer_device::gated(act gate, act up, ffn_activation f) {
    if (f == ffn_activation::gelu) {
        ops_->gelu(buf(gate), buf(gate), elements(gate));
        ops_->mul(buf(gate), buf(up), buf(gate), elements(gate), elements(gate));
    } else {
        ops_->swiglu(buf(gate), buf(up), buf(gate), elements(gate));
    }
}

void layer_device::activation(act in, act out, ffn_activation f) {
    if (f == ffn_activation::gelu) ops_->gelu(buf(in), buf(out), elements(in));
    else ops_->silu(buf(in), buf(out), elements(in));
}

// The router, each token's picks through their experts' SwiGLU, and the weighted sum in pick order.
void layer_device::experts(const layer & L, act in, act out) {
    const hparams & hp = model_.hp();
    const int64_t k = hp.n_expert_used;
    const dev_weight & router = weight_of(L.ffn_gate_inp), & gate = weight_of(L.ffn_gate_exps),
                     & up = weight_of(L.ffn_up_exps), & down = weight_of(L.ffn_down_exps);
    const tensor_type in_types[] = {router.type, gate.type, up.type};
    const device_buffer * q8 = q8_for(buf(in), n_, hp.n_embd, in_types);
    ops_->matmul(router.view(), buf(in), *logits_, n_, q8);
    ops_->moe_route(*logits_, *ids_, *pick_weights_, n_, hp.n_expert, k);
    ops_->matmul_experts(gate.view(), hp.n_ff, buf(in), false, *ids_, *pick_gate_, n_, k, q8);
    ops_->matmul_experts(up.view(), hp.n_ff, buf(in), false, *ids_, *pick_up_, n_, k, q8);
    ops_->swiglu(*pick_gate_, *pick_up_, *pick_gate_, n_ * k * hp.n_ff);
    const device_buffer * q8_down = q8_for(*pick_gate_, n_ * k, hp.n_ff, std::span(&down.type, 1));
    ops_->matmul_experts(down.view(), hp.n_embd, *pick_gate_, true, *ids_, *pick_down_, n_, k, q8_down);
    ops_->moe_combine(*pick_down_, *pick_weights_, buf(out), n_, k, hp.n_embd);
}

result<std::unique_ptr<layer_device>> make_device_layers(const model & m, int32_t n_layers, bool output,
                                                         std::shared_ptr<kernels::device_ops> ops) {
    const std::string name = ops->name();
    auto d = std::make_unique<layer_device>(m, m.hp().n_layer - n_layers, output, std::move(ops));
    if (status s = d->upload_weights(); !s) return fail("uploading the weights to the device (", name, "): ", s.message());
    return d;
}

}  // namespace hearth::inference
