#include "inference/graph/layer_graph.h"

#include <algorithm>
#include <limits>

namespace hearth::inference {

int64_t act_width(const hparams & hp, act a) {
    switch (a) {
    case act::x:
    case act::cur: return hp.n_embd;
    case act::q:
    case act::attn: return hp.n_embd_q();
    case act::k:
    case act::v: return hp.n_embd_kv();
    case act::gate:
    case act::up: return hp.n_ff;
    case act::logits: return hp.n_vocab;
    }
    return 0;
}

namespace {

// A block's end: x += residual_scale * post_norm(cur) (gemma3's post-norms, granite's scale).
void add_to_residual(layer_executor & e, const hparams & hp, const float * post_norm, std::string_view post_name,
                     std::string_view out_name, int32_t il) {
    if (post_norm) {
        e.norm_rows(act::cur, post_norm, hp.n_embd);
        e.observe(post_name, il, act::cur);
    }
    if (hp.residual_scale != 1.0f) e.scale(act::cur, hp.residual_scale);
    e.add(act::x, act::cur);
    e.observe(out_name, il, act::x);
}

}  // namespace

void attention_block(layer_executor & e, const hparams & hp, const layer & L, int32_t il, int32_t n_ctx) {
    e.norm(act::x, act::cur, L.attn_norm, L.attn_norm_b);
    e.observe("attn_norm", il, act::cur);
    const product qkv[] = {{&L.wq, act::q}, {&L.wk, act::k}, {&L.wv, act::v}};
    e.products(act::cur, qkv);
    e.observe("Qcur", il, act::q);
    e.observe("Kcur", il, act::k);
    e.observe("Vcur", il, act::v);
    e.add_bias(act::q, L.bq);
    e.add_bias(act::k, L.bk);
    e.add_bias(act::v, L.bv);
    e.observe("Qcur_bias", il, act::q);
    e.observe("Kcur_bias", il, act::k);
    e.observe("Vcur_bias", il, act::v);
    if (L.q_norm) {   // each head of Q and K normed on its own (qwen3, gemma3)
        e.norm_rows(act::q, L.q_norm, hp.head_dim);
        e.norm_rows(act::k, L.k_norm, hp.head_dim);
        e.observe("Qcur_normed", il, act::q);
        e.observe("Kcur_normed", il, act::k);
    }
    const kernels::rope_params rope = hp.rope_for_layer(il, n_ctx);
    e.rope(act::q, hp.n_head, rope);
    e.rope(act::k, hp.n_head_kv, rope);
    e.observe("Qcur_rope", il, act::q);
    e.observe("Kcur_rope", il, act::k);
    if (hp.q_scale != 1.0f) {
        e.scale(act::q, hp.q_scale);
        e.observe("Qcur_scaled", il, act::q);
    }
    e.attention(il, hp.is_swa(il));
    e.observe("kqv_out", il, act::attn);
    const product out[] = {{&L.wo, act::cur}};
    e.products(act::attn, out);
    e.add_bias(act::cur, L.bo);
    e.observe("attn_out", il, act::cur);
    add_to_residual(e, hp, L.attn_post_norm, "attn_post_norm", "ffn_inp", il);
}

void ffn_block(layer_executor & e, const hparams & hp, const layer & L, int32_t il) {
    const bool gelu = hp.act == ffn_activation::gelu;
    e.norm(act::x, act::cur, L.ffn_norm, L.ffn_norm_b);
    e.observe("ffn_norm", il, act::cur);
    if (L.ffn_gate_inp.data) {   // experts (qwen3moe)
        e.experts(L, act::cur, act::cur);
    } else {
        if (L.w_gate.data) {   // gated: down(act(gate(x)) * up(x))
            const product gate_up[] = {{&L.w_gate, act::gate}, {&L.w_up, act::up}};
            e.products(act::cur, gate_up);
            e.observe("ffn_gate", il, act::gate);
            e.observe("ffn_up", il, act::up);
            e.gated(act::gate, act::up, hp.act);
            e.observe(gelu ? "ffn_geglu" : "ffn_swiglu", il, act::gate);
        } else {   // no gate (starcoder2): down(act(up(x) + b_up))
            const product up[] = {{&L.w_up, act::up}};
            e.products(act::cur, up);
            e.add_bias(act::up, L.b_up);
            e.observe("ffn_up", il, act::up);
            e.activation(act::up, act::gate, hp.act);
            e.observe(gelu ? "ffn_gelu" : "ffn_silu", il, act::gate);
        }
        const product down[] = {{&L.w_down, act::cur}};
        e.products(act::gate, down);
    }
    e.add_bias(act::cur, L.b_down);
    e.observe("ffn_out", il, act::cur);
    add_to_residual(e, hp, L.ffn_post_norm, "ffn_post_norm", "l_out", il);
}

void output_block(layer_executor & e, const hparams & hp, const model & m) {
    e.norm(act::x, act::cur, m.output_norm(), m.output_norm_b());
    e.observe("result_norm", -1, act::cur);
    const product out[] = {{&m.output(), act::logits}};
    e.products(act::cur, out);
    if (hp.logit_scale != 1.0f) e.scale(act::logits, hp.logit_scale);   // granite
    e.observe("result_output", -1, act::logits);
}

namespace {

// Runs nothing: notes what the graph uses.
class recorder final : public layer_executor {
public:
    recorder(const hparams & hp, layer_use & use) : hp_(hp), use_(use) {}

    void norm(act, act, const float * w, const float * b) override {
        vec(w, hp_.n_embd);
        vec(b, hp_.n_embd);
    }
    void norm_rows(act, const float * w, int64_t width) override { vec(w, width); }
    void products(act, std::span<const product> ps) override {
        for (const product & p : ps) weight_of(p.w);
    }
    void add_bias(act a, const float * b) override { vec(b, act_width(hp_, a)); }
    void rope(act, int64_t, const kernels::rope_params & p) override { vec(p.freq_factors, p.n_rot / 2); }
    void scale(act, float) override {}
    void attention(int32_t, bool) override {}
    void add(act, act) override {}
    void gated(act, act, ffn_activation) override {}
    void activation(act, act, ffn_activation) override {}
    void experts(const layer & L, act, act) override {
        use_.experts = true;
        for (const weight * w : {&L.ffn_gate_inp, &L.ffn_gate_exps, &L.ffn_up_exps, &L.ffn_down_exps}) weight_of(w);
    }

private:
    void vec(const float * v, int64_t n) {
        if (!v) return;
        const bool seen = std::any_of(use_.vectors.begin(), use_.vectors.end(), [&](const auto & u) { return u.data == v; });
        if (!seen) use_.vectors.push_back({v, n});
    }
    void weight_of(const weight * w) {
        if (std::find(use_.weights.begin(), use_.weights.end(), w) == use_.weights.end()) use_.weights.push_back(w);
    }

    const hparams & hp_;
    layer_use & use_;
};

}  // namespace

layer_use layer_needs(const hparams & hp, const layer & L, int32_t il) {
    layer_use use;
    recorder r(hp, use);
    // Short and long contexts: phi3 picks its RoPE factors by the cache's size.
    attention_block(r, hp, L, il, 1);
    attention_block(r, hp, L, il, std::numeric_limits<int32_t>::max());
    ffn_block(r, hp, L, il);
    return use;
}

layer_use output_needs(const model & m) {
    layer_use use;
    recorder r(m.hp(), use);
    output_block(r, m.hp(), m);
    return use;
}

}  // namespace hearth::inference
