#include "inference/device/device_layers.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "inference/graph/layer_graph.h"

namespace hearth::inference {
namespace {

using kernels::device_buffer;
using kernels::tensor_type;
using buffer_ptr = std::unique_ptr<device_buffer>;

// One cache's K/V rows of the device's layers, in device buffers ([n_alloc_][row bytes of the
// half] each), grown as kv_cache grows its host rows. Holds the device, so it may outlive the
// layer_device.
class device_kv_rows final : public kv_device_rows {
public:
    device_kv_rows(std::shared_ptr<kernels::device_ops> ops, int32_t first, int32_t n_layer, const kv_cache & cache)
        : ops_(std::move(ops)), first_(first), n_ctx_(cache.n_ctx()),
          k_row_bytes_(cache.row_bytes(kv_half::k)), v_row_bytes_(cache.row_bytes(kv_half::v)),
          k_(static_cast<size_t>(n_layer - first)), v_(static_cast<size_t>(n_layer - first)) {}

    const void * owner() const override { return ops_.get(); }
    int32_t first_layer() const override { return first_; }
    int32_t n_alloc() const override { return n_alloc_; }
    uint64_t bytes() const override { return k_.size() * static_cast<uint64_t>(n_alloc_) * (k_row_bytes_ + v_row_bytes_); }

    status reserve(int32_t n) override {
        if (n <= n_alloc_) return {};
        // The rounding kv_cache::reserve applies, so a slot costs the same wherever it lives.
        const int32_t step = kv_cache::k_grow_positions;
        const int32_t grown = std::min(n_ctx_, (n + step - 1) / step * step);
        std::vector<buffer_ptr> k(k_.size()), v(v_.size());
        for (size_t i = 0; i < k_.size(); ++i) {
            for (auto [to, from, row_bytes] : {std::tuple{&k[i], &k_[i], k_row_bytes_}, {&v[i], &v_[i], v_row_bytes_}}) {
                const size_t kept = static_cast<size_t>(n_alloc_) * row_bytes;
                auto b = ops_->make_buffer(static_cast<size_t>(grown) * row_bytes);
                if (!b) return b.error();
                if (kept > 0)
                    if (status s = ops_->copy(**from, 0, **b, 0, kept); !s) return s;
                *to = std::move(*b);
            }
        }
        k_ = std::move(k);
        v_ = std::move(v);
        n_alloc_ = grown;
        return {};
    }
    status read(int32_t il, kv_half h, int32_t pos, int32_t n, uint8_t * dst) const override {
        const size_t rb = row_bytes(h);
        return rows(il, h).download(dst, static_cast<size_t>(n) * rb, static_cast<size_t>(pos) * rb);
    }
    status write(int32_t il, kv_half h, int32_t pos, int32_t n, const uint8_t * src) override {
        const size_t rb = row_bytes(h);
        return rows(il, h).upload(src, static_cast<size_t>(n) * rb, static_cast<size_t>(pos) * rb);
    }

    device_buffer & rows(int32_t il, kv_half h) const {
        return *(h == kv_half::k ? k_ : v_)[static_cast<size_t>(il - first_)];
    }

private:
    size_t row_bytes(kv_half h) const { return h == kv_half::k ? k_row_bytes_ : v_row_bytes_; }

    std::shared_ptr<kernels::device_ops> ops_;
    int32_t first_;
    int32_t n_ctx_;
    size_t k_row_bytes_, v_row_bytes_;
    int32_t n_alloc_ = 0;
    std::vector<buffer_ptr> k_, v_;   // [n_layer - first_]
};

// The layer graph (layer_graph.h) on a device: every operation queued on device_ops, the
// model's weights and vectors found by their host address among the copies uploaded once.
class device_layers final : public layer_device, private layer_executor {
public:
    device_layers(const model & m, int32_t first, std::shared_ptr<kernels::device_ops> ops);
    status upload_weights();

    const std::string & describe() const override { return describe_; }
    int32_t first_layer() const override { return first_; }
    bool takes_cache(const kv_types & t) const override {
        const int64_t n_embd_kv = model_.hp().n_embd_kv();
        return ops_->takes_cache(t.k, n_embd_kv) && ops_->takes_cache(t.v, n_embd_kv);
    }
    status eval_layers(float * x, int32_t n, const int32_t * pos, const int32_t * n_kv, const int32_t * kv_start,
                       kv_cache & cache) override;

private:
    struct dev_weight {
        buffer_ptr data;
        kernels::device_weight view() const { return {data.get(), type, n_rows, n_cols, row_bytes}; }
        tensor_type type{};
        int64_t n_rows = 0, n_cols = 0;
        size_t row_bytes = 0;
    };

    // layer_executor, over the batch eval_layers set.
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

    const device_buffer & buf(act a) const { return *acts_[static_cast<size_t>(a)]; }
    int64_t elements(act a) const { return static_cast<int64_t>(n_) * act_width(model_.hp(), a); }
    const dev_weight & weight_of(const weight & w) const { return weights_.at(w.data); }
    const device_buffer * vec(const float * v) const { return v ? vectors_.at(v).get() : nullptr; }
    // in ([rows][width]) in q8_0, once for these weights, where one of them takes it; the buffer or null.
    const device_buffer * q8_for(const device_buffer & in, int64_t rows, int64_t width,
                                 std::initializer_list<const dev_weight *> ws);

    result<device_kv_rows *> rows_of(kv_cache & cache);
    status ensure_capacity(int32_t n, int32_t ctx);
    result<buffer_ptr> make_from(const void * data, size_t bytes) const;

    const model & model_;
    std::shared_ptr<kernels::device_ops> ops_;
    int32_t first_ = 0;
    std::string describe_;
    std::unordered_map<const void *, dev_weight> weights_;     // by the host weight's data
    std::unordered_map<const float *, buffer_ptr> vectors_;    // norm weights, biases, RoPE factors
    int32_t n_cap_ = 0;
    // Activations, each [n_cap_][act_width]; pos_, n_kv_, kv_start_, no_window_: [n_cap_] int32;
    // scores_: attention's scratch for n_cap_ tokens over the widest cache seen.
    std::array<buffer_ptr, k_act_count> acts_;
    buffer_ptr pos_, n_kv_, kv_start_, no_window_, scores_;
    buffer_ptr x_q8_;   // the input of the next products in q8_0, where their weights take it
    // The experts' scratch (models with experts): router logits [n][n_expert], picks and their
    // weights [n][n_used], the picks' gate and up [n][n_used][n_ff] and down [n][n_used][n_embd].
    buffer_ptr logits_, ids_, pick_weights_, pick_gate_, pick_up_, pick_down_;
    // The batch eval_layers runs.
    int32_t n_ = 0, pos0_ = 0, n_ctx_ = 0;
    kv_cache * cache_ = nullptr;
    device_kv_rows * rows_ = nullptr;
};

device_layers::device_layers(const model & m, int32_t first, std::shared_ptr<kernels::device_ops> ops)
    : model_(m), ops_(std::move(ops)), first_(first) {
    const int32_t n_layer = m.hp().n_layer;
    describe_ = ops_->name() + ", layers " + std::to_string(first_) + "-" + std::to_string(n_layer - 1) + " of " +
                std::to_string(n_layer);
}

result<buffer_ptr> device_layers::make_from(const void * data, size_t bytes) const {
    auto b = ops_->make_buffer(bytes);
    if (!b) return b.error();
    if (status s = (*b)->upload(data, bytes); !s) return s.error();
    return b;
}

// What the graph uses on the device's layers (layer_needs), each uploaded once.
status device_layers::upload_weights() {
    const hparams & hp = model_.hp();
    for (int32_t il = first_; il < hp.n_layer; ++il) {
        const layer_use use = layer_needs(hp, model_.layers()[il], il);
        for (const weight * w : use.weights) {
            if (weights_.contains(w->data)) continue;
            auto b = make_from(w->data, static_cast<size_t>(w->n_rows) * w->row_bytes);
            if (!b) return b.error();
            weights_.emplace(w->data, dev_weight{std::move(*b), w->type, w->n_rows, w->n_cols, w->row_bytes});
        }
        for (const layer_use::vec & v : use.vectors) {
            if (vectors_.contains(v.data)) continue;
            auto b = make_from(v.data, static_cast<size_t>(v.n) * sizeof(float));
            if (!b) return b.error();
            vectors_.emplace(v.data, std::move(*b));
        }
    }
    return {};
}

status device_layers::ensure_capacity(int32_t n, int32_t ctx) {
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
result<device_kv_rows *> device_layers::rows_of(kv_cache & cache) {
    kv_device_rows * held = cache.device_rows();
    if (held && held->owner() == ops_.get() && held->first_layer() == first_) return static_cast<device_kv_rows *>(held);
    if (held)
        if (status s = cache.bring_home(); !s) return s.error();
    const hparams & hp = model_.hp();
    auto rows = std::make_unique<device_kv_rows>(ops_, first_, hp.n_layer, cache);
    if (status s = rows->reserve(cache.n_alloc()); !s) return s.error();
    for (int32_t il = first_; il < hp.n_layer; ++il) {
        if (status s = rows->write(il, kv_half::k, 0, cache.n_pos(), cache.k_data(il)); !s) return s.error();
        if (status s = rows->write(il, kv_half::v, 0, cache.n_pos(), cache.v_data(il)); !s) return s.error();
    }
    device_kv_rows * out = rows.get();
    cache.attach_device_rows(std::move(rows));
    return out;
}

status device_layers::eval_layers(float * x, int32_t n, const int32_t * pos, const int32_t * n_kv,
                                  const int32_t * kv_start, kv_cache & cache) {
    const hparams & hp = model_.hp();
    int32_t ctx = pos[0] + n;
    for (int32_t t = 0; t < n; ++t) ctx = std::max(ctx, n_kv[t]);
    auto rows = rows_of(cache);
    if (!rows) return rows.error();
    device_kv_rows & kv = **rows;
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
    return acts_[static_cast<size_t>(act::x)]->download(x, x_bytes);
}

void device_layers::norm(act in, act out, const float * w, const float * b) {
    const hparams & hp = model_.hp();
    if (hp.norm == norm_kind::layer) ops_->layer_norm(buf(in), vec(w), vec(b), buf(out), n_, hp.n_embd, hp.rms_eps);
    else ops_->rms_norm(buf(in), vec(w), buf(out), n_, hp.n_embd, hp.rms_eps);
}

void device_layers::norm_rows(act a, const float * w, int64_t width) {
    ops_->rms_norm(buf(a), vec(w), buf(a), elements(a) / width, width, model_.hp().rms_eps);
}

const device_buffer * device_layers::q8_for(const device_buffer & in, int64_t rows, int64_t width,
                                            std::initializer_list<const dev_weight *> ws) {
    for (const dev_weight * w : ws) {
        if (!ops_->takes_q8_0_activations(w->type)) continue;
        ops_->quantize_q8_0(in, *x_q8_, rows, width);
        return x_q8_.get();
    }
    return nullptr;
}

// As the CPU's matmul_context, the input's q8_0 form is made once for Q, K and V.
void device_layers::products(act in, std::span<const product> ps) {
    const int64_t width = act_width(model_.hp(), in);
    bool q8 = false;
    for (const product & p : ps) q8 = q8 || ops_->takes_q8_0_activations(p.w->type);
    if (q8) ops_->quantize_q8_0(buf(in), *x_q8_, n_, width);
    for (const product & p : ps) ops_->matmul(weight_of(*p.w).view(), buf(in), buf(p.out), n_, q8 ? x_q8_.get() : nullptr);
}

void device_layers::add_bias(act a, const float * b) {
    if (b) ops_->add(buf(a), *vec(b), buf(a), elements(a), act_width(model_.hp(), a));
}

void device_layers::rope(act a, int64_t n_head, const kernels::rope_params & p) {
    ops_->rope(buf(a), *pos_, n_, n_head, model_.hp().head_dim, p, vec(p.freq_factors));
}

void device_layers::scale(act a, float s) { ops_->scale(buf(a), s, elements(a)); }

void device_layers::attention(int32_t il, bool sliding) {
    const hparams & hp = model_.hp();
    const device_buffer & k_rows = rows_->rows(il, kv_half::k), & v_rows = rows_->rows(il, kv_half::v);
    const kv_types & types = cache_->types();
    ops_->kv_append(types.k, buf(act::k), k_rows, pos0_, n_, hp.n_embd_kv());
    ops_->kv_append(types.v, buf(act::v), v_rows, pos0_, n_, hp.n_embd_kv());
    ops_->attention(types.k, types.v, buf(act::q), k_rows, v_rows, *n_kv_, sliding ? *kv_start_ : *no_window_, *scores_,
                    buf(act::attn), {n_, hp.n_head, hp.n_head_kv, hp.head_dim, n_ctx_, hp.kq_scale});
}

void device_layers::add(act dst, act src) { ops_->add(buf(dst), buf(src), buf(dst), elements(dst), elements(dst)); }

void device_layers::gated(act gate, act up, ffn_activation f) {
    if (f == ffn_activation::gelu) {
        ops_->gelu(buf(gate), buf(gate), elements(gate));
        ops_->mul(buf(gate), buf(up), buf(gate), elements(gate));
    } else {
        ops_->swiglu(buf(gate), buf(up), buf(gate), elements(gate));
    }
}

void device_layers::activation(act in, act out, ffn_activation f) {
    if (f == ffn_activation::gelu) ops_->gelu(buf(in), buf(out), elements(in));
    else ops_->silu(buf(in), buf(out), elements(in));
}

// The router, each token's picks through their experts' SwiGLU, and the weighted sum in pick order.
void device_layers::experts(const layer & L, act in, act out) {
    const hparams & hp = model_.hp();
    const int64_t k = hp.n_expert_used;
    const dev_weight & router = weight_of(L.ffn_gate_inp), & gate = weight_of(L.ffn_gate_exps),
                     & up = weight_of(L.ffn_up_exps), & down = weight_of(L.ffn_down_exps);
    const device_buffer * q8 = q8_for(buf(in), n_, hp.n_embd, {&router, &gate, &up});
    ops_->matmul(router.view(), buf(in), *logits_, n_, q8);
    ops_->moe_route(*logits_, *ids_, *pick_weights_, n_, hp.n_expert, k);
    ops_->matmul_experts(gate.view(), hp.n_ff, buf(in), false, *ids_, *pick_gate_, n_, k, q8);
    ops_->matmul_experts(up.view(), hp.n_ff, buf(in), false, *ids_, *pick_up_, n_, k, q8);
    ops_->swiglu(*pick_gate_, *pick_up_, *pick_gate_, n_ * k * hp.n_ff);
    const device_buffer * q8_down = q8_for(*pick_gate_, n_ * k, hp.n_ff, {&down});
    ops_->matmul_experts(down.view(), hp.n_embd, *pick_gate_, true, *ids_, *pick_down_, n_, k, q8_down);
    ops_->moe_combine(*pick_down_, *pick_weights_, buf(out), n_, k, hp.n_embd);
}

}  // namespace

result<std::unique_ptr<layer_device>> make_device_layers(const model & m, int32_t n_layers,
                                                         std::shared_ptr<kernels::device_ops> ops) {
    const std::string name = ops->name();
    std::unique_ptr<device_layers> d(new device_layers(m, m.hp().n_layer - n_layers, std::move(ops)));
    if (status s = d->upload_weights(); !s) return fail("uploading the weights to the device (", name, "): ", s.message());
    return std::unique_ptr<layer_device>(std::move(d));
}

}  // namespace hearth::inference
