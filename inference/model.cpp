#include "inference/model.h"

#include <cmath>

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
    ffn_activation act = ffn_activation::silu;
};

const std::vector<arch_traits> & all_arch_traits() {
    static const std::vector<arch_traits> traits{
        {.name = "llama", .rope = rope_kind::normal},
        {.name = "qwen2", .rope = rope_kind::neox, .qkv_bias = true},
        {.name = "qwen3", .rope = rope_kind::neox, .qk_norm = true},
        {.name = "starcoder2", .rope = rope_kind::neox, .qkv_bias = true, .layer_norm = true, .gated = false,
         .out_biases = true, .act = ffn_activation::gelu},
        {.name = "gemma3", .rope = rope_kind::neox, .qk_norm = true, .post_norms = true, .embd_scale = true,
         .swa = true, .act = ffn_activation::gelu},
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

}  // namespace

kernels::rope_params hparams::rope_for_layer(int32_t il) const {
    const bool swa = is_swa(il);
    return kernels::rope_params{n_rot, swa ? rope_freq_base_swa : rope_freq_base,
                                swa ? rope_freq_scale_swa : rope_freq_scale,
                                rope == rope_kind::neox ? kernels::rope_mode::neox : kernels::rope_mode::normal};
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
    if (hp.arch == "gemma3") {
        // Q is scaled before the attention; Gemma 3 27B by n_embd / n_head instead of head_dim
        // (llama.cpp tells it by its 62 layers).
        hp.q_scale = hp.n_layer == 62 ? 1.0f / std::sqrt(static_cast<float>(hp.n_embd / hp.n_head)) : hp.kq_scale;
        hp.kq_scale = 1.0f;
    }
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
        for (status s : {get_v("attn_norm.weight", hp.n_embd, L.attn_norm, false),
                         get_m("attn_q.weight", hp.n_embd, hp.n_embd_q(), L.wq),
                         get_m("attn_k.weight", hp.n_embd, hp.n_embd_kv(), L.wk),
                         get_m("attn_v.weight", hp.n_embd, hp.n_embd_kv(), L.wv),
                         get_m("attn_output.weight", hp.n_embd_q(), hp.n_embd, L.wo),
                         get_v("attn_q.bias", hp.n_embd_q(), L.bq, !biases),
                         get_v("attn_k.bias", hp.n_embd_kv(), L.bk, !biases),
                         get_v("attn_v.bias", hp.n_embd_kv(), L.bv, !biases),
                         get_v("ffn_norm.weight", hp.n_embd, L.ffn_norm, false),
                         traits->gated ? get_m("ffn_gate.weight", hp.n_embd, hp.n_ff, L.w_gate) : status{},
                         get_m("ffn_up.weight", hp.n_embd, hp.n_ff, L.w_up),
                         get_m("ffn_down.weight", hp.n_ff, hp.n_embd, L.w_down)}) {
            if (!s) return s.error();
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
