#include "inference/model/model.h"

#include <cmath>
#include <tuple>

#include "kernels/quant.h"

namespace hearth::inference {
namespace {

// Bounds that no real model reaches; past them a file is lying or hostile.
constexpr int64_t k_max_layers = 512;
constexpr int64_t k_max_heads = 1024;
constexpr int64_t k_max_head_dim = 1024;
constexpr int64_t k_max_embd = 1 << 16;
constexpr int64_t k_max_ff = 1 << 18;
constexpr int64_t k_max_vocab = 1 << 22;
constexpr int64_t k_max_ctx = 1 << 24;

struct reader {
    const gguf::gguf_file & f;
    std::string arch;

    result<int64_t> count(const std::string & suffix, int64_t lo, int64_t hi, std::optional<int64_t> fallback = {}) const {
        const std::string key = arch + "." + suffix;
        auto v = f.get_uint(key);
        if (!v) return v.error();
        if (!*v) {
            if (fallback) return *fallback;
            return fail("model: metadata key '", key, "' is missing");
        }
        const uint64_t x = **v;
        if (x < static_cast<uint64_t>(lo) || x > static_cast<uint64_t>(hi))
            return fail("model: '", key, "' = ", x, " is outside [", lo, ", ", hi, "]");
        return static_cast<int64_t>(x);
    }

    result<double> real(const std::string & suffix, double fallback, double lo, double hi) const {
        const std::string key = arch + "." + suffix;
        auto v = f.get_float(key);
        if (!v) return v.error();
        const double x = v->value_or(fallback);
        if (!(x >= lo && x <= hi)) return fail("model: '", key, "' = ", x, " is outside [", lo, ", ", hi, "]");
        return x;
    }
};

result<weight> matrix(const gguf::gguf_file & f, const std::string & name, int64_t n_cols, int64_t n_rows) {
    const auto * t = f.find_tensor(name);
    if (!t) return fail("model: tensor '", name, "' is missing");
    if (t->n_dims != 2 || t->ne[0] != n_cols || t->ne[1] != n_rows)
        return fail("model: tensor '", name, "' has shape [", t->ne[0], ", ", t->ne[1], ", ", t->ne[2], ", ", t->ne[3],
                    "], expected [", n_cols, ", ", n_rows, "]");
    if (!kernels::is_supported(t->type))
        return fail("model: tensor '", name, "' has type ", kernels::tensor_type_info(t->type).name,
                    ", which the CPU kernels do not support");
    return weight{t->type, t->data, n_cols, n_rows, static_cast<size_t>(t->row_bytes())};
}

result<const float *> vector_f32(const gguf::gguf_file & f, const std::string & name, int64_t n, bool optional = false) {
    const auto * t = f.find_tensor(name);
    if (!t) {
        if (optional) return static_cast<const float *>(nullptr);
        return fail("model: tensor '", name, "' is missing");
    }
    if (t->n_dims != 1 || t->ne[0] != n)
        return fail("model: tensor '", name, "' has ", t->ne[0], " elements in ", t->n_dims, " dims, expected a vector of ", n);
    if (t->type != kernels::tensor_type::f32)
        return fail("model: tensor '", name, "' has type ", kernels::tensor_type_info(t->type).name, ", expected f32");
    // The data section and every tensor in it are aligned (>= 32 bytes), so this is a valid float*.
    return reinterpret_cast<const float *>(t->data);
}

// What each architecture adds to the llama layer (model.h lists them).
struct arch_traits {
    const char * name;
    rope_kind rope;
    bool qkv_bias = false;      // attn_{q,k,v}.bias
    bool qk_norm = false;       // attn_{q,k}_norm.weight, per head
    bool post_norms = false;    // post_attention_norm.weight, post_ffw_norm.weight
    bool embd_scale = false;    // token embeddings times sqrt(n_embd)
    bool swa = false;           // attention.sliding_window, a pattern of window layers
    bool layer_norm = false;    // LayerNorm with bias (norm weights and .bias); eps from layer_norm_epsilon
    bool gated = true;          // ffn_gate.weight; without it the MLP is down(act(up(x)))
    bool out_biases = false;    // attn_output.bias, ffn_up.bias, ffn_down.bias
    bool fused_gate_up = false; // gate and up stacked in one ffn_up.weight [2 * n_ff][n_embd], gate first
    bool q_prescaled = false;   // Q times 1/sqrt(head_dim) before the attention, whose scale is then 1
    bool rope_freqs = false;    // an optional rope_freqs.weight (llama3's frequency factors)
    bool rope_long_short = false;    // optional rope_factors_{long,short}.weight (phi3's 128k models)
    bool granite_scales = false;     // embedding_scale, residual_scale, attention.scale, logit_scale
    bool experts = false;            // ffn_{gate_inp,gate_exps,up_exps,down_exps}: a mixture of experts
    ffn_activation act = ffn_activation::silu;
};

const std::vector<arch_traits> & all_arch_traits() {
    static const std::vector<arch_traits> traits{
        {.name = "llama", .rope = rope_kind::normal, .rope_freqs = true},
        {.name = "qwen2", .rope = rope_kind::neox, .qkv_bias = true},
        {.name = "qwen3", .rope = rope_kind::neox, .qk_norm = true},
        {.name = "starcoder2", .rope = rope_kind::neox, .qkv_bias = true, .layer_norm = true, .gated = false,
         .out_biases = true, .act = ffn_activation::gelu},
        {.name = "gemma3", .rope = rope_kind::neox, .qk_norm = true, .post_norms = true, .embd_scale = true,
         .swa = true, .q_prescaled = true, .act = ffn_activation::gelu},
        {.name = "phi3", .rope = rope_kind::neox, .fused_gate_up = true, .q_prescaled = true, .rope_long_short = true},
        {.name = "granite", .rope = rope_kind::normal, .rope_freqs = true, .granite_scales = true},
        {.name = "qwen3moe", .rope = rope_kind::neox, .qk_norm = true, .experts = true},
    };
    return traits;
}

// Which layers use the sliding window, as llama.cpp reads it: attention.sliding_window_pattern
// is either one flag per layer or a period n (layer il is windowed unless il % n == n - 1;
// 0 windows every layer); absent, the architecture's period.
result<std::vector<uint8_t>> swa_pattern(const reader & r, int64_t n_layer, int64_t default_period) {
    const std::string key = r.arch + ".attention.sliding_window_pattern";
    std::vector<uint8_t> out(static_cast<size_t>(n_layer));
    const auto * v = r.f.find(key);
    if (v && v->type == gguf::value_type::array) {
        if (v->count != static_cast<uint64_t>(n_layer))
            return fail("model: '", key, "' has ", v->count, " elements, expected one per layer (", n_layer, ")");
        if (v->elem_type == gguf::value_type::boolean) {
            for (int64_t il = 0; il < n_layer; ++il) out[static_cast<size_t>(il)] = v->data[il] != 0;
            return out;
        }
        auto flags = r.f.get_int_array(key);   // llama.cpp takes 32-bit integers as flags too
        if (!flags) return flags.error();
        for (int64_t il = 0; il < n_layer; ++il) out[static_cast<size_t>(il)] = (**flags)[static_cast<size_t>(il)] != 0;
        return out;
    }
    auto period = r.count("attention.sliding_window_pattern", 0, k_max_layers, default_period);
    if (!period) return period.error();
    for (int64_t il = 0; il < n_layer; ++il)
        out[static_cast<size_t>(il)] = *period == 0 || il % *period < *period - 1;
    return out;
}

// A stack of n_expert matrices of n_rows x n_cols ([n_cols, n_rows, n_expert] in the file), as
// one weight of n_expert * n_rows rows.
result<weight> expert_stack(const gguf::gguf_file & f, const std::string & name, int64_t n_cols, int64_t n_rows,
                            int64_t n_expert) {
    const auto * t = f.find_tensor(name);
    if (!t) return fail("model: tensor '", name, "' is missing");
    if (t->n_dims != 3 || t->ne[0] != n_cols || t->ne[1] != n_rows || t->ne[2] != n_expert)
        return fail("model: tensor '", name, "' has shape [", t->ne[0], ", ", t->ne[1], ", ", t->ne[2], ", ", t->ne[3],
                    "], expected [", n_cols, ", ", n_rows, ", ", n_expert, "]");
    if (!kernels::is_supported(t->type))
        return fail("model: tensor '", name, "' has type ", kernels::tensor_type_info(t->type).name,
                    ", which the CPU kernels do not support");
    return weight{t->type, t->data, n_cols, n_rows * n_expert, static_cast<size_t>(t->row_bytes())};
}

// The router and the experts of layer prefix p.
status load_experts(const gguf::gguf_file & f, const std::string & p, const hparams & hp, layer & L) {
    auto router = matrix(f, p + "ffn_gate_inp.weight", hp.n_embd, hp.n_expert);
    if (!router) return router.error();
    L.ffn_gate_inp = *router;
    for (auto [name, cols, rows, out] : {std::tuple{"ffn_gate_exps.weight", hp.n_embd, hp.n_ff, &L.ffn_gate_exps},
                                         std::tuple{"ffn_up_exps.weight", hp.n_embd, hp.n_ff, &L.ffn_up_exps},
                                         std::tuple{"ffn_down_exps.weight", hp.n_ff, hp.n_embd, &L.ffn_down_exps}}) {
        auto w = expert_stack(f, p + name, cols, rows, hp.n_expert);
        if (!w) return w.error();
        *out = *w;
    }
    return {};
}

// The expert counts, and the FFN width becomes an expert's.
status read_expert_counts(const reader & r, hparams & hp) {
    auto n_expert = r.count("expert_count", 1, 4096);
    if (!n_expert) return n_expert.error();
    auto n_used = r.count("expert_used_count", 1, *n_expert);
    if (!n_used) return n_used.error();
    auto n_ff = r.count("expert_feed_forward_length", 1, k_max_ff);
    if (!n_ff) return n_ff.error();
    hp.n_expert = static_cast<int32_t>(*n_expert);
    hp.n_expert_used = static_cast<int32_t>(*n_used);
    hp.n_ff = static_cast<int32_t>(*n_ff);
    return {};
}

// Rows [row0, row0 + n_rows) of w: one part of a fused matrix (each row is contiguous).
weight rows_of(const weight & w, int64_t row0, int64_t n_rows) {
    return weight{w.type, static_cast<const uint8_t *>(w.data) + static_cast<size_t>(row0) * w.row_bytes, w.n_cols,
                  n_rows, w.row_bytes};
}

// Q, K and V of layer prefix p, from attn_qkv (rows Q, then K, then V, as llama.cpp splits it)
// or from attn_q, attn_k and attn_v; with their biases, fused or not (required when `biases`).
status load_qkv(const gguf::gguf_file & f, const std::string & p, const hparams & hp, bool biases, layer & L) {
    const int64_t n_q = hp.n_embd_q(), n_kv = hp.n_embd_kv();
    if (f.find_tensor(p + "attn_qkv.weight")) {
        auto qkv = matrix(f, p + "attn_qkv.weight", hp.n_embd, n_q + 2 * n_kv);
        if (!qkv) return qkv.error();
        L.wq = rows_of(*qkv, 0, n_q);
        L.wk = rows_of(*qkv, n_q, n_kv);
        L.wv = rows_of(*qkv, n_q + n_kv, n_kv);
        auto b = vector_f32(f, p + "attn_qkv.bias", n_q + 2 * n_kv, true);
        if (!b) return b.error();
        if (*b) {
            L.bq = *b;
            L.bk = *b + n_q;
            L.bv = *b + n_q + n_kv;
            return {};
        }
    } else {
        for (auto [name, rows, out] : {std::tuple{"attn_q.weight", n_q, &L.wq}, std::tuple{"attn_k.weight", n_kv, &L.wk},
                                       std::tuple{"attn_v.weight", n_kv, &L.wv}}) {
            auto w = matrix(f, p + name, hp.n_embd, rows);
            if (!w) return w.error();
            *out = *w;
        }
    }
    for (auto [name, n, out] : {std::tuple{"attn_q.bias", n_q, &L.bq}, std::tuple{"attn_k.bias", n_kv, &L.bk},
                                std::tuple{"attn_v.bias", n_kv, &L.bv}}) {
        auto v = vector_f32(f, p + name, n, !biases);
        if (!v) return v.error();
        *out = *v;
    }
    return {};
}

// granite's multipliers, as llama.cpp reads them: logit_scale is required (the logits are
// divided by it), the others optional (absent or 0: none).
status read_granite_scales(const reader & r, hparams & hp) {
    if (!r.f.find(r.arch + ".logit_scale")) return fail("model: metadata key '", r.arch, ".logit_scale' is missing");
    auto logit = r.real("logit_scale", 1.0, 1e-6, 1e6);
    if (!logit) return logit.error();
    hp.logit_scale = 1.0f / static_cast<float>(*logit);
    auto embd = r.real("embedding_scale", 0.0, 0.0, 1e6);
    if (!embd) return embd.error();
    if (*embd != 0.0) hp.embd_scale = static_cast<float>(*embd);
    auto residual = r.real("residual_scale", 0.0, 0.0, 1e6);
    if (!residual) return residual.error();
    if (*residual != 0.0) hp.residual_scale = static_cast<float>(*residual);
    auto attn = r.real("attention.scale", 0.0, 0.0, 1e6);
    if (!attn) return attn.error();
    if (*attn != 0.0) hp.kq_scale = static_cast<float>(*attn);
    // rope.scaling.finetuned = false turns RoPE off in granite (llama.cpp's switch for it).
    auto roped = r.f.get_bool(r.arch + ".rope.scaling.finetuned");
    if (!roped) return roped.error();
    if (*roped && !**roped) return fail("model: '", r.arch, ".rope.scaling.finetuned' = false (granite without RoPE) is not supported");
    return {};
}

// The RoPE frequency factors the architecture may carry, and the long-context keys.
status read_rope_factors(const gguf::gguf_file & f, const reader & r, const arch_traits & traits, hparams & hp) {
    const int64_t n = hp.n_rot / 2;
    if (traits.rope_freqs) {
        auto v = vector_f32(f, "rope_freqs.weight", n, true);
        if (!v) return v.error();
        hp.rope_factors = *v;
    }
    if (traits.rope_long_short) {
        auto s = vector_f32(f, "rope_factors_short.weight", n, true);
        if (!s) return s.error();
        auto l = vector_f32(f, "rope_factors_long.weight", n, true);
        if (!l) return l.error();
        hp.rope_factors = *s;
        hp.rope_factors_long = *l;
    }
    auto orig = r.count("rope.scaling.original_context_length", 1, k_max_ctx, hp.n_ctx_train);
    if (!orig) return orig.error();
    hp.n_ctx_orig = static_cast<int32_t>(*orig);
    auto attn_factor = r.real("rope.scaling.attn_factor", 1.0, 1e-3, 1e3);
    if (!attn_factor) return attn_factor.error();
    hp.rope_attn_factor = static_cast<float>(*attn_factor);
    return {};
}

}  // namespace

kernels::rope_params hparams::rope_for_layer(int32_t il, int32_t n_ctx) const {
    const bool swa = is_swa(il);
    return kernels::rope_params{
        .n_rot = n_rot,
        .freq_base = swa ? rope_freq_base_swa : rope_freq_base,
        .freq_scale = swa ? rope_freq_scale_swa : rope_freq_scale,
        .mode = rope == rope_kind::neox ? kernels::rope_mode::neox : kernels::rope_mode::normal,
        .freq_factors = rope_factors_long && n_ctx > n_ctx_orig ? rope_factors_long : rope_factors,
        .attn_factor = rope_attn_factor,
    };
}

const std::vector<std::string> & model::supported_architectures() {
    static const std::vector<std::string> archs = [] {
        std::vector<std::string> names;
        for (const auto & t : all_arch_traits()) names.emplace_back(t.name);
        return names;
    }();
    return archs;
}

result<model> model::load(const gguf::gguf_file & f) {
    auto arch = f.get_string("general.architecture");
    if (!arch) return arch.error();
    if (!*arch) return fail("model: metadata key 'general.architecture' is missing");
    model m;
    hparams & hp = m.hp_;
    hp.arch = std::string(**arch);
    const arch_traits * traits = nullptr;
    for (const auto & t : all_arch_traits())
        if (hp.arch == t.name) traits = &t;
    if (!traits) {
        std::string list;
        for (const auto & a : supported_architectures()) list += (list.empty() ? "" : ", ") + a;
        return fail("model: architecture '", hp.arch, "' is not supported (supported: ", list, ")");
    }
    hp.rope = traits->rope;
    hp.act = traits->act;
    hp.norm = traits->layer_norm ? norm_kind::layer : norm_kind::rms;

    reader r{f, hp.arch};
    auto n_layer = r.count("block_count", 1, k_max_layers);
    if (!n_layer) return n_layer.error();
    auto n_embd = r.count("embedding_length", 1, k_max_embd);
    if (!n_embd) return n_embd.error();
    auto n_head = r.count("attention.head_count", 1, k_max_heads);
    if (!n_head) return n_head.error();
    auto n_head_kv = r.count("attention.head_count_kv", 1, k_max_heads, *n_head);
    if (!n_head_kv) return n_head_kv.error();
    auto n_ff = r.count("feed_forward_length", 1, k_max_ff);
    if (!n_ff) return n_ff.error();
    auto n_ctx = r.count("context_length", 1, k_max_ctx);
    if (!n_ctx) return n_ctx.error();
    if (*n_embd % *n_head != 0 && !f.find(hp.arch + ".attention.key_length"))
        return fail("model: embedding_length ", *n_embd, " is not a multiple of attention.head_count ", *n_head);
    auto head_dim = r.count("attention.key_length", 1, k_max_head_dim, *n_embd / *n_head);
    if (!head_dim) return head_dim.error();
    auto v_dim = r.count("attention.value_length", 1, k_max_head_dim, *head_dim);
    if (!v_dim) return v_dim.error();
    if (*v_dim != *head_dim) return fail("model: attention.value_length ", *v_dim, " differs from key_length ", *head_dim, " (not supported)");
    if (*n_head % *n_head_kv != 0)
        return fail("model: attention.head_count ", *n_head, " is not a multiple of head_count_kv ", *n_head_kv);
    auto n_rot = r.count("rope.dimension_count", 2, *head_dim, *head_dim);
    if (!n_rot) return n_rot.error();
    if (*n_rot % 2 != 0) return fail("model: rope.dimension_count ", *n_rot, " is odd");
    auto eps = r.real(traits->layer_norm ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon", 1e-5,
                      1e-12, 1e-1);
    if (!eps) return eps.error();
    auto base = r.real("rope.freq_base", 10000.0, 1.0, 1e9);
    if (!base) return base.error();
    auto scale_factor = r.real("rope.scaling.factor", 1.0, 1e-3, 1e3);
    if (!scale_factor) return scale_factor.error();

    hp.n_layer = static_cast<int32_t>(*n_layer);
    hp.n_embd = static_cast<int32_t>(*n_embd);
    hp.n_head = static_cast<int32_t>(*n_head);
    hp.n_head_kv = static_cast<int32_t>(*n_head_kv);
    hp.n_ff = static_cast<int32_t>(*n_ff);
    hp.n_ctx_train = static_cast<int32_t>(*n_ctx);
    hp.head_dim = static_cast<int32_t>(*head_dim);
    hp.n_rot = static_cast<int32_t>(*n_rot);
    hp.rms_eps = static_cast<float>(*eps);
    hp.rope_freq_base = static_cast<float>(*base);
    hp.rope_freq_scale = static_cast<float>(1.0 / *scale_factor);
    hp.kq_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
    if (traits->q_prescaled) {
        // Q is scaled before the attention; Gemma 3 27B by n_embd / n_head instead of head_dim
        // (llama.cpp tells it by its 62 layers).
        const bool gemma3_27b = hp.arch == "gemma3" && hp.n_layer == 62;
        hp.q_scale = gemma3_27b ? 1.0f / std::sqrt(static_cast<float>(hp.n_embd / hp.n_head)) : hp.kq_scale;
        hp.kq_scale = 1.0f;
    }
    if (traits->granite_scales)
        if (auto s = read_granite_scales(r, hp); !s) return s.error();
    if (traits->experts)
        if (auto s = read_expert_counts(r, hp); !s) return s.error();
    if (auto s = read_rope_factors(f, r, *traits, hp); !s) return s.error();
    if (traits->embd_scale) hp.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
    if (traits->swa) {
        auto n_swa = r.count("attention.sliding_window", 0, k_max_ctx, 0);
        if (!n_swa) return n_swa.error();
        hp.n_swa = static_cast<int32_t>(*n_swa);
        if (hp.n_swa > 0) {
            auto layers = swa_pattern(r, hp.n_layer, 6);
            if (!layers) return layers.error();
            hp.swa_layers = std::move(*layers);
            auto base_swa = r.real("rope.freq_base_swa", 10000.0, 1.0, 1e9);
            if (!base_swa) return base_swa.error();
            hp.rope_freq_base_swa = static_cast<float>(*base_swa);
        }
    }

    const auto * embd = f.find_tensor("token_embd.weight");
    if (!embd) return fail("model: tensor 'token_embd.weight' is missing");
    if (embd->n_dims != 2 || embd->ne[1] < 1 || embd->ne[1] > k_max_vocab)
        return fail("model: tensor 'token_embd.weight' has an unusable shape (n_dims ", embd->n_dims, ", rows ", embd->ne[1], ")");
    hp.n_vocab = static_cast<int32_t>(embd->ne[1]);

    auto te = matrix(f, "token_embd.weight", hp.n_embd, hp.n_vocab);
    if (!te) return te.error();
    m.token_embd_ = *te;
    auto on = vector_f32(f, "output_norm.weight", hp.n_embd);
    if (!on) return on.error();
    m.output_norm_ = *on;
    if (traits->layer_norm) {
        auto onb = vector_f32(f, "output_norm.bias", hp.n_embd);
        if (!onb) return onb.error();
        m.output_norm_b_ = *onb;
    }
    if (f.find_tensor("output.weight")) {
        auto out = matrix(f, "output.weight", hp.n_embd, hp.n_vocab);
        if (!out) return out.error();
        m.output_ = *out;
    } else {
        m.output_ = m.token_embd_;  // tied embeddings
    }

    const bool biases = traits->qkv_bias;
    m.layers_.resize(hp.n_layer);
    for (int32_t il = 0; il < hp.n_layer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        layer & L = m.layers_[il];
        auto get_m = [&](const char * name, int64_t cols, int64_t rows, weight & out) -> status {
            auto w = matrix(f, p + name, cols, rows);
            if (!w) return w.error();
            out = *w;
            return {};
        };
        auto get_v = [&](const char * name, int64_t n, const float *& out, bool optional) -> status {
            auto v = vector_f32(f, p + name, n, optional);
            if (!v) return v.error();
            out = *v;
            return {};
        };
        const bool dense = !traits->experts;
        const bool separate_gate = dense && traits->gated && !traits->fused_gate_up;
        for (status s : {get_v("attn_norm.weight", hp.n_embd, L.attn_norm, false),
                         load_qkv(f, p, hp, biases, L),
                         get_m("attn_output.weight", hp.n_embd_q(), hp.n_embd, L.wo),
                         get_v("ffn_norm.weight", hp.n_embd, L.ffn_norm, false),
                         separate_gate ? get_m("ffn_gate.weight", hp.n_embd, hp.n_ff, L.w_gate) : status{},
                         dense ? get_m("ffn_up.weight", hp.n_embd, traits->fused_gate_up ? 2 * hp.n_ff : hp.n_ff, L.w_up)
                               : load_experts(f, p, hp, L),
                         dense ? get_m("ffn_down.weight", hp.n_ff, hp.n_embd, L.w_down) : status{}}) {
            if (!s) return s.error();
        }
        if (traits->fused_gate_up) {   // gate rows first, then up (llama.cpp's swiglu of the fused product)
            L.w_gate = rows_of(L.w_up, 0, hp.n_ff);
            L.w_up = rows_of(L.w_up, hp.n_ff, hp.n_ff);
        }
        if (traits->qk_norm)
            for (status s : {get_v("attn_q_norm.weight", hp.head_dim, L.q_norm, false),
                             get_v("attn_k_norm.weight", hp.head_dim, L.k_norm, false)})
                if (!s) return s.error();
        if (traits->layer_norm)
            for (status s : {get_v("attn_norm.bias", hp.n_embd, L.attn_norm_b, false),
                             get_v("ffn_norm.bias", hp.n_embd, L.ffn_norm_b, false)})
                if (!s) return s.error();
        if (traits->out_biases)
            for (status s : {get_v("attn_output.bias", hp.n_embd, L.bo, false), get_v("ffn_up.bias", hp.n_ff, L.b_up, false),
                             get_v("ffn_down.bias", hp.n_embd, L.b_down, false)})
                if (!s) return s.error();
        if (traits->post_norms)
            for (status s : {get_v("post_attention_norm.weight", hp.n_embd, L.attn_post_norm, false),
                             get_v("post_ffw_norm.weight", hp.n_embd, L.ffn_post_norm, false)})
                if (!s) return s.error();
    }
    m.weight_bytes_ = f.tensor_data_bytes();
    return m;
}

}  // namespace hearth::inference
