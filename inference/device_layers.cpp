#include "inference/device_layers.h"

#include <algorithm>
#include <initializer_list>
#include <tuple>
#include <utility>
#include <vector>

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

class device_layers final : public layer_device {
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
    struct dev_layer {
        buffer_ptr attn_norm, ffn_norm, bq, bk, bv;
        dev_weight wq, wk, wv, wo, gate, up, down;
    };

    result<device_kv_rows *> rows_of(kv_cache & cache);
    status ensure_capacity(int32_t n, int32_t ctx);
    result<buffer_ptr> make_from(const void * data, size_t bytes) const;

    const model & model_;
    std::shared_ptr<kernels::device_ops> ops_;
    int32_t first_ = 0;
    std::string describe_;
    std::vector<dev_layer> layers_;   // [n_layer - first_]
    int32_t n_cap_ = 0;
    // Activations, each [n_cap_][width]; pos_, n_kv_, kv_start_, no_window_: [n_cap_] int32;
    // scores_: attention's scratch for n_cap_ tokens over the widest cache seen.
    buffer_ptr x_, cur_, q_, k_, v_, attn_, gate_, up_, pos_, n_kv_, kv_start_, no_window_, scores_;
    buffer_ptr x_q8_;   // the input of the next products in q8_0, where their weights take it
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

status device_layers::upload_weights() {
    const hparams & hp = model_.hp();
    layers_.resize(static_cast<size_t>(hp.n_layer - first_));
    const auto put = [&](dev_weight & d, const weight & w) -> status {
        auto b = make_from(w.data, static_cast<size_t>(w.n_rows) * w.row_bytes);
        if (!b) return b.error();
        d.data = std::move(*b);
        d.type = w.type;
        d.n_rows = w.n_rows;
        d.n_cols = w.n_cols;
        d.row_bytes = w.row_bytes;
        return {};
    };
    const auto put_vec = [&](buffer_ptr & d, const float * v, int64_t n) -> status {
        if (!v) return {};
        auto b = make_from(v, static_cast<size_t>(n) * sizeof(float));
        if (!b) return b.error();
        d = std::move(*b);
        return {};
    };
    for (int32_t il = first_; il < hp.n_layer; ++il) {
        const layer & L = model_.layers()[il];
        dev_layer & d = layers_[static_cast<size_t>(il - first_)];
        for (status s : {put(d.wq, L.wq), put(d.wk, L.wk), put(d.wv, L.wv), put(d.wo, L.wo), put(d.gate, L.w_gate),
                         put(d.up, L.w_up), put(d.down, L.w_down), put_vec(d.attn_norm, L.attn_norm, hp.n_embd),
                         put_vec(d.ffn_norm, L.ffn_norm, hp.n_embd), put_vec(d.bq, L.bq, hp.n_embd_q()),
                         put_vec(d.bk, L.bk, hp.n_embd_kv()), put_vec(d.bv, L.bv, hp.n_embd_kv())})
            if (!s) return s;
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
        for (auto [buf, bytes] : {std::pair{&x_, f(hp.n_embd)}, {&cur_, f(hp.n_embd)}, {&q_, f(hp.n_embd_q())},
                                  {&k_, f(hp.n_embd_kv())}, {&v_, f(hp.n_embd_kv())}, {&attn_, f(hp.n_embd_q())},
                                  {&gate_, f(hp.n_ff)}, {&up_, f(hp.n_ff)}, {&pos_, f(1)}, {&n_kv_, f(1)},
                                  {&kv_start_, f(1)}, {&no_window_, f(1)}})
            if (status s = make(*buf, bytes); !s) return s;
        const int64_t widest = std::max({hp.n_embd, hp.n_embd_q(), hp.n_ff}) / 32 * 32;
        if (status s = make(x_q8_, ops_->q8_0_activation_bytes(n, widest)); !s) return s;
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
    const int32_t pos0 = pos[0];
    int32_t ctx = pos0 + n;
    for (int32_t t = 0; t < n; ++t) ctx = std::max(ctx, n_kv[t]);
    auto rows = rows_of(cache);
    if (!rows) return rows.error();
    device_kv_rows & kv = **rows;
    if (status s = kv.reserve(std::max(ctx, cache.n_alloc())); !s) return s;
    const int32_t n_ctx = kv.n_alloc();
    if (status s = ensure_capacity(n, n_ctx); !s) return s;
    const int64_t n_embd = hp.n_embd, n_q = hp.n_embd_q(), n_embd_kv = hp.n_embd_kv();

    for (status s : {x_->upload(x, static_cast<size_t>(n * n_embd) * sizeof(float)),
                     pos_->upload(pos, static_cast<size_t>(n) * sizeof(int32_t)),
                     n_kv_->upload(n_kv, static_cast<size_t>(n) * sizeof(int32_t)),
                     kv_start_->upload(kv_start, static_cast<size_t>(n) * sizeof(int32_t))})
        if (!s) return s;

    kernels::device_ops & o = *ops_;
    // The products of `in` ([n][width]) with these weights, its q8_0 form made once for them all
    // where a weight takes it (as the CPU's matmul_context converts once for Q, K and V).
    const auto products = [&](const device_buffer & in, int64_t width,
                              std::initializer_list<std::pair<const dev_weight *, const device_buffer *>> ws) {
        bool q8 = false;
        for (const auto & [w, out] : ws) q8 = q8 || o.takes_q8_0_activations(w->type);
        if (q8) o.quantize_q8_0(in, *x_q8_, n, width);
        for (const auto & [w, out] : ws) o.matmul(w->view(), in, *out, n, x_q8_.get());
    };
    for (int32_t il = first_; il < hp.n_layer; ++il) {
        const dev_layer & d = layers_[static_cast<size_t>(il - first_)];
        // attention block: x += wo(attend(rope(q), rope(k), v))
        o.rms_norm(*x_, d.attn_norm.get(), *cur_, n, n_embd, hp.rms_eps);
        products(*cur_, n_embd, {{&d.wq, q_.get()}, {&d.wk, k_.get()}, {&d.wv, v_.get()}});
        if (d.bq) o.add(*q_, *d.bq, *q_, n * n_q, n_q);
        if (d.bk) o.add(*k_, *d.bk, *k_, n * n_embd_kv, n_embd_kv);
        if (d.bv) o.add(*v_, *d.bv, *v_, n * n_embd_kv, n_embd_kv);
        const kernels::rope_params rope = hp.rope_for_layer(il, cache.n_ctx());
        o.rope(*q_, *pos_, n, hp.n_head, hp.head_dim, rope);
        o.rope(*k_, *pos_, n, hp.n_head_kv, hp.head_dim, rope);
        const device_buffer & k_rows = kv.rows(il, kv_half::k), & v_rows = kv.rows(il, kv_half::v);
        const kv_types & types = cache.types();
        o.kv_append(types.k, *k_, k_rows, pos0, n, n_embd_kv);
        o.kv_append(types.v, *v_, v_rows, pos0, n, n_embd_kv);
        o.attention(types.k, types.v, *q_, k_rows, v_rows, *n_kv_, hp.is_swa(il) ? *kv_start_ : *no_window_, *scores_,
                    *attn_, {n, hp.n_head, hp.n_head_kv, hp.head_dim, n_ctx, hp.kq_scale});
        products(*attn_, n_q, {{&d.wo, cur_.get()}});
        o.add(*x_, *cur_, *x_, n * n_embd, n * n_embd);
        // feed-forward block: x += down(silu(gate(norm(x))) * up(norm(x)))
        o.rms_norm(*x_, d.ffn_norm.get(), *cur_, n, n_embd, hp.rms_eps);
        products(*cur_, n_embd, {{&d.gate, gate_.get()}, {&d.up, up_.get()}});
        o.swiglu(*gate_, *up_, *gate_, static_cast<int64_t>(n) * hp.n_ff);
        products(*gate_, hp.n_ff, {{&d.down, cur_.get()}});
        o.add(*x_, *cur_, *x_, n * n_embd, n * n_embd);
    }
    if (status st = o.finish(); !st) return st;

    // Only now, with every layer done, the result replaces x (the batch's K/V rows stay on the device).
    return x_->download(x, static_cast<size_t>(n * n_embd) * sizeof(float));
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
