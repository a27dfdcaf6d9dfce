#include "inference/layer_plan.h"

#include <algorithm>

#include "kernels/quant.h"

namespace hearth::inference {
namespace {

constexpr double k_memory_margin = 0.8;   // `auto` plans within 80% of the device's memory

uint64_t weight_bytes(const weight & w) { return static_cast<uint64_t>(w.n_rows) * w.row_bytes; }

}  // namespace

std::string unsupported_layer(const hparams & hp, const layer & L, bool (*supports_weight)(kernels::tensor_type)) {
    using kernels::tensor_type;
    if (hp.norm != norm_kind::rms) return "LayerNorm";
    if (hp.act != ffn_activation::silu || !L.w_gate.data) return "a feed-forward without SwiGLU";
    if (L.q_norm || L.k_norm) return "Q/K head norms";
    if (L.attn_post_norm || L.ffn_post_norm) return "post-norms";
    if (L.bo || L.b_up || L.b_down) return "output or feed-forward biases";
    if (hp.q_scale != 1.0f) return "a Q scale";
    if (hp.rope_factors || hp.rope_factors_long || hp.rope_attn_factor != 1.0f) return "RoPE frequency factors";
    if (hp.residual_scale != 1.0f) return "a residual scale";
    if (hp.head_dim > 256 || hp.n_embd_kv() % 2 != 0) return "a head size over 256";
    for (const weight * w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) {
        const bool plain = w->type == tensor_type::f16 || w->type == tensor_type::f32;
        if (!supports_weight(w->type) || (!plain && w->n_cols % 32 != 0) || (w->type == tensor_type::f32 && w->row_bytes % 4 != 0))
            return std::string("a ") + std::string(kernels::tensor_type_info(w->type).name) + " weight";
    }
    return {};
}

uint64_t layer_device_bytes(const hparams & hp, const layer & L, int32_t n_ctx) {
    uint64_t b = 0;
    for (const weight * w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) b += weight_bytes(*w);
    b += 2ull * hp.n_embd * sizeof(float);                                          // norms
    b += 2ull * static_cast<uint64_t>(n_ctx) * hp.n_embd_kv() * sizeof(uint16_t);   // f16 K and V
    return b;
}

result<int32_t> plan_offload(const model & m, const gpu_layers & want, int32_t n_ctx, const offload_backend & be) {
    const hparams & hp = m.hp();
    int32_t n = hp.n_layer;
    if (want.how == gpu_layers::kind::count) n = std::min(want.n, hp.n_layer);
    // The layers that can run on the device are a tail of the model: count it.
    int32_t n_ok = 0;
    std::string why;
    for (int32_t il = hp.n_layer - 1; il >= 0 && n_ok < n; --il, ++n_ok) {
        why = unsupported_layer(hp, m.layers()[il], be.supports_weight);
        if (!why.empty()) break;
    }
    if (n_ok == 0) return fail("the ", be.name, " backend cannot run layer ", hp.n_layer - 1, " of this model (", why, ")");
    if (n_ok < n && want.how != gpu_layers::kind::automatic)
        return fail("the ", be.name, " backend cannot run layer ", hp.n_layer - n_ok - 1, " of this model (", why,
                    "); at most ", n_ok, " of the last layers can be offloaded");
    n = n_ok;
    if (want.how == gpu_layers::kind::automatic) {
        const uint64_t budget = want.device_memory_cap ? want.device_memory_cap : be.device_bytes;
        const auto usable = static_cast<uint64_t>(static_cast<double>(budget) * k_memory_margin);
        uint64_t used = 0;
        int32_t fit = 0;
        for (int32_t il = hp.n_layer - 1; il >= hp.n_layer - n; --il) {
            const uint64_t b = layer_device_bytes(hp, m.layers()[il], n_ctx);
            if (used + b > usable) break;
            used += b;
            ++fit;
        }
        if (fit == 0) return fail("the ", be.name, " device's memory (", budget >> 20, " MiB) holds none of this model's layers");
        n = fit;
    }
    return n;
}

}  // namespace hearth::inference
