// k_smoothing: per-layer, per-channel scales s >= 1 for the keys of a quantized K cache. Qwen2's
// K biases put a few channels of a head at |100|-|240| (layer 0: most of them near 10); a q8_0 or
// q4_0 block of 32 keys shares one scale, so such a channel rounds its small neighbours away. A
// smoothed cache stores k / s and the query is multiplied by s before the attention, so the
// scores are unchanged: (q * s) . (k / s) = q . k, and every attention kernel reads the rows as
// it does any other. The two channels of a RoPE pair share one scale, so the scaling commutes
// with the rotation (at evaluation and when kv_shift turns moved rows). Each scale is a power of
// two: k / s and q * s are exact in f32, so an unquantized row would give the same bits.
// The scales come from the model alone (its K biases), once; a layer without a K bias, or with
// a norm on K after it, has none. Where a model has no scale above 1, the smoothing is empty.
// The CPU's layers divide and multiply in place (divide_keys, multiply_queries); a device's
// multiply by row vectors (key_factors, query_factors), which gives the same bits: 1 / s is
// exact for a power of two.
// Thread-safety: immutable after from_model().
#pragma once

#include <cstdint>
#include <vector>

#include "inference/model/model.h"
#include "kernels/tensor_type.h"

namespace hearth::inference {

class k_smoothing {
public:
    // A RoPE pair whose K bias has magnitude r = hypot(b_c, b_c') > k_tau takes the power of two
    // s that brings r into (k_tau / 2, k_tau]; a channel past n_rot likewise with |b_c|. Keys
    // without their bias reach pair magnitudes of 4-20 on the default model (median 4-5 per
    // layer), so a bias pair above 16 outweighs what the input adds, and only those are scaled:
    // scaling a pair whose own activations matter multiplies their rounding error by s
    // (docs/design.md: a threshold relative to each layer's median bias scaled those too, and
    // lost on the 1.5B model what it won on the 0.5B).
    static constexpr float k_tau = 16.0f;

    // The rule that makes the scales from a model; slot files record it beside smoothed rows, so
    // a change of the rule (or of k_tau) must bump it.
    static constexpr uint32_t k_rule = 1;

    k_smoothing() = default;
    static k_smoothing from_model(const model & m);

    bool empty() const { return layers_.empty(); }
    // Layer il's scales, [n_embd_kv] (head g's channels at g * head_dim), or null where all are 1.
    const float * scales(int32_t il) const {
        return empty() || layers_[static_cast<size_t>(il)].empty() ? nullptr : layers_[static_cast<size_t>(il)].data();
    }
    // Whether a K cache of this type stores smoothed keys: the quantized ones.
    static bool applies_to(kernels::tensor_type k_type) {
        return k_type == kernels::tensor_type::q8_0 || k_type == kernels::tensor_type::q4_0;
    }

    // k[t][c] /= s[c] over n_tokens rows of [n_embd_kv]; q[t][h * head_dim + d] *= s[g * head_dim + d]
    // with g = h / (n_head / n_head_kv), the KV head that query head reads.
    static void divide_keys(float * k, const float * s, int64_t n_tokens, int64_t n_embd_kv);
    static void multiply_queries(float * q, const float * s, int64_t n_tokens, int64_t n_head, int64_t n_head_kv,
                                 int64_t head_dim);

    // The same as factors over one row, for a device's broadcast product: 1 / s [n_embd_kv] for
    // the keys, and s spread over the query heads [n_head * head_dim]. Empty where layer il has
    // no scales.
    std::vector<float> key_factors(int32_t il) const;
    std::vector<float> query_factors(int32_t il, int64_t n_head, int64_t n_head_kv, int64_t head_dim) const;

private:
    std::vector<std::vector<float>> layers_;   // [n_layer][n_embd_kv or 0]; empty when no layer has a scale
};

}  // namespace hearth::inference
