#include "inference/cache/k_smoothing.h"

#include <algorithm>
#include <cmath>

namespace hearth::inference {
namespace {

// The power of two s >= 1 that brings a magnitude r to at most tau.
float pow2_scale(float r, float tau) {
    if (!(r > tau)) return 1.0f;
    return std::exp2(std::ceil(std::log2(r / tau)));
}

// One head's scales from its K bias b [head_dim]: per RoPE pair, then per channel past n_rot.
void head_scales(const float * b, const hparams & hp, float * s) {
    constexpr float tau = k_smoothing::k_tau;
    const int32_t D = hp.head_dim, half = hp.n_rot / 2;
    for (int32_t i = 0; i < half; ++i) {
        // NeoX pairs channel i with i + n_rot / 2; the normal RoPE pairs 2i with 2i + 1.
        const int32_t a = hp.rope == rope_kind::neox ? i : 2 * i, c = hp.rope == rope_kind::neox ? i + half : 2 * i + 1;
        s[a] = s[c] = pow2_scale(std::hypot(b[a], b[c]), tau);
    }
    for (int32_t d = hp.n_rot; d < D; ++d) s[d] = pow2_scale(std::fabs(b[d]), tau);
}

}  // namespace

k_smoothing k_smoothing::from_model(const model & m) {
    const hparams & hp = m.hp();
    k_smoothing out;
    out.layers_.resize(static_cast<size_t>(hp.n_layer));
    bool any = false;
    for (int32_t il = 0; il < hp.n_layer; ++il) {
        const layer & L = m.layers()[static_cast<size_t>(il)];
        if (!L.bk || L.k_norm) continue;   // a norm after the bias rescales each head: the bias says nothing
        auto & s = out.layers_[static_cast<size_t>(il)];
        s.resize(static_cast<size_t>(hp.n_embd_kv()));
        for (int32_t g = 0; g < hp.n_head_kv; ++g)
            head_scales(L.bk + static_cast<size_t>(g) * hp.head_dim, hp, s.data() + static_cast<size_t>(g) * hp.head_dim);
        if (std::all_of(s.begin(), s.end(), [](float x) { return x == 1.0f; })) s.clear();
        else any = true;
    }
    if (!any) out.layers_.clear();
    return out;
}

void k_smoothing::divide_keys(float * k, const float * s, int64_t n_tokens, int64_t n_embd_kv) {
    for (int64_t t = 0; t < n_tokens; ++t, k += n_embd_kv)
        for (int64_t c = 0; c < n_embd_kv; ++c) k[c] /= s[c];
}

void k_smoothing::multiply_queries(float * q, const float * s, int64_t n_tokens, int64_t n_head, int64_t n_head_kv,
                                   int64_t head_dim) {
    const int64_t group = n_head / n_head_kv;
    for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t h = 0; h < n_head; ++h, q += head_dim) {
            const float * sg = s + (h / group) * head_dim;
            for (int64_t d = 0; d < head_dim; ++d) q[d] *= sg[d];
        }
}

std::vector<float> k_smoothing::key_factors(int32_t il) const {
    const float * s = scales(il);
    if (!s) return {};
    const auto & layer = layers_[static_cast<size_t>(il)];
    std::vector<float> out(layer.size());
    for (size_t c = 0; c < out.size(); ++c) out[c] = 1.0f / s[c];
    return out;
}

std::vector<float> k_smoothing::query_factors(int32_t il, int64_t n_head, int64_t n_head_kv, int64_t head_dim) const {
    const float * s = scales(il);
    if (!s) return {};
    std::vector<float> out(static_cast<size_t>(n_head * head_dim), 1.0f);
    multiply_queries(out.data(), s, 1, n_head, n_head_kv, head_dim);
    return out;
}

}  // namespace hearth::inference
