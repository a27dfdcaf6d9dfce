// layer_graph: the transformer layer of every architecture hearth loads, written once, and the
// interface of the executors that run it: the CPU's (cpu_layers.h, over kernels/) and a device's
// (device/layer_device.h, over kernels/device_ops.h). What differs between architectures is in the
// model's hyperparameters and which of a layer's tensors are present (biases, head norms,
// post-norms, a gate, experts); the graph reads them and asks the executor for operations on
// named activations. The plan for a device follows from the same graph: layer_needs() runs it
// over a recorder and lists what a layer uses (layer_plan.h checks those against a backend).
// Thread-safety: the functions are pure over the executor they are given.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "inference/model/model.h"
#include "kernels/ops.h"

namespace hearth::inference {

// The activations of a batch the graph names, each [n_tokens][act_width()].
enum class act { x, cur, q, k, v, attn, gate, up, logits };
inline constexpr int k_act_count = 9;
// x, cur: n_embd; q, attn: n_embd_q; k, v: n_embd_kv; gate, up: n_ff; logits: n_vocab.
int64_t act_width(const hparams & hp, act a);

// One product of a group: out = in . w (rows of w are out's columns).
struct product {
    const weight * w;
    act out;
};

// The operations of a layer on one batch. Vectors (norm weights, biases, RoPE factors) and
// weights are the model's own: a device executor finds its copies of them by address.
class layer_executor {
public:
    virtual ~layer_executor() = default;

    // out = the model's norm of in (RMS times w, or LayerNorm times w plus b), row by row.
    virtual void norm(act in, act out, const float * w, const float * b) = 0;
    // a = RMS norm of a times w, in place, over rows of `width` (head norms: head_dim; post-norms: n_embd).
    virtual void norm_rows(act a, const float * w, int64_t width) = 0;
    // Each product of in, in quantized once for them all where the weights take it.
    virtual void products(act in, std::span<const product> ps) = 0;
    // a += b on every row (b: [act_width(a)]).
    virtual void add_bias(act a, const float * b) = 0;
    // a rotated in place, n_head heads per row.
    virtual void rope(act a, int64_t n_head, const kernels::rope_params & p) = 0;
    // a *= s (the graph calls it only for s != 1).
    virtual void scale(act a, float s) = 0;
    // Stores k and v as layer il's rows of the batch's positions, then attn = attention of q over
    // the layer's cache (sliding: within the window).
    virtual void attention(int32_t il, bool sliding) = 0;
    // dst += src.
    virtual void add(act dst, act src) = 0;
    // gate = act(gate) * up (SwiGLU or GEGLU).
    virtual void gated(act gate, act up, ffn_activation f) = 0;
    // out = act(in) (an FFN without a gate).
    virtual void activation(act in, act out, ffn_activation f) = 0;
    // out = the mixture of experts of in (L's router and experts).
    virtual void experts(const layer & L, act in, act out) = 0;
    // The named intermediate (llama.cpp's graph names), for the CPU's observer.
    virtual void observe(std::string_view name, int32_t il, act a) { (void)name, (void)il, (void)a; }
};

// The attention block of layer il over a cache of n_ctx positions:
// x += residual_scale * post_norm(wo(attend(rope(q), rope(k), v)) + bo).
void attention_block(layer_executor & e, const hparams & hp, const layer & L, int32_t il, int32_t n_ctx);
// The feed-forward block: x += residual_scale * post_norm(ffn(norm(x))).
void ffn_block(layer_executor & e, const hparams & hp, const layer & L, int32_t il);

// After the layers: logits = output(norm(x)) (times the logit scale, granite), over the rows
// the executor was given for it.
void output_block(layer_executor & e, const hparams & hp, const model & m);

// What one layer uses, as the graph asks for it: the weights of its products (the experts'
// stacks included) and the vectors with their lengths (norm weights, biases, RoPE factors for
// short and long contexts).
struct layer_use {
    std::vector<const weight *> weights;
    struct vec {
        const float * data;
        int64_t n;
    };
    std::vector<vec> vectors;
    bool experts = false;
};
layer_use layer_needs(const hparams & hp, const layer & L, int32_t il);
// What the output block uses.
layer_use output_needs(const model & m);

}  // namespace hearth::inference
