#include "inference/device/layer_plan.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "inference/cache/kv_cache.h"
#include "inference/graph/layer_graph.h"
#include "kernels/quant.h"

namespace hearth::inference {
namespace {

uint64_t bytes_of(const weight & w) { return static_cast<uint64_t>(w.n_rows) * w.row_bytes; }

std::string mib(uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return buf;
}

// "a q5_K weight" for the first of ws the backend cannot take, or "".
std::string unsupported_weight(const std::vector<const weight *> & ws,
                               const std::function<bool(kernels::tensor_type)> & supports_weight) {
    using kernels::tensor_type;
    for (const weight * w : ws) {
        const bool plain = w->type == tensor_type::f16 || w->type == tensor_type::f32;
        if (!supports_weight(w->type) || (!plain && w->n_cols % 32 != 0) || (w->type == tensor_type::f32 && w->row_bytes % 4 != 0))
            return std::string("a ") + std::string(kernels::tensor_type_info(w->type).name) + " weight";
    }
    return {};
}

}  // namespace

result<gpu_layers> parse_gpu_layers(std::string_view text) {
    if (text == "all") return gpu_layers{gpu_layers::kind::all, 0, 0};
    if (text == "auto") return gpu_layers{gpu_layers::kind::automatic, 0, 0};
    int32_t n = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < 0)
        return fail("--gpu-layers '", std::string(text), "': expected a number of layers >= 0, 'all' or 'auto'");
    return gpu_layers{gpu_layers::kind::count, n, 0};
}

std::string to_string(const gpu_layers & g) {
    switch (g.how) {
    case gpu_layers::kind::all: return "all";
    case gpu_layers::kind::automatic: return "auto";
    case gpu_layers::kind::count: break;
    }
    return std::to_string(g.n);
}

std::string unsupported_layer(const hparams & hp, const layer & L, int32_t il,
                              const std::function<bool(kernels::tensor_type)> & supports_weight) {
    using kernels::tensor_type;
    // The attention kernels hold a head in registers and read cache rows as 32-bit words.
    if (hp.head_dim > 256 || hp.n_embd_kv() % 2 != 0) return "a head size over 256";
    return unsupported_weight(layer_needs(hp, L, il).weights, supports_weight);
}

uint64_t layer_weight_bytes(const hparams & hp, const layer & L, int32_t il) {
    const layer_use use = layer_needs(hp, L, il);
    uint64_t b = 0;
    for (const weight * w : use.weights) b += bytes_of(*w);
    for (const layer_use::vec & v : use.vectors) b += static_cast<uint64_t>(v.n) * sizeof(float);
    return b;
}

uint64_t output_weight_bytes(const model & m) {
    const layer_use use = output_needs(m);
    uint64_t b = static_cast<uint64_t>(k_output_logit_rows) * static_cast<uint64_t>(m.hp().n_vocab) * sizeof(float);
    for (const weight * w : use.weights) b += bytes_of(*w);
    for (const layer_use::vec & v : use.vectors) b += static_cast<uint64_t>(v.n) * sizeof(float);
    return b;
}

uint64_t layer_kv_bytes(const hparams & hp, const offload_room & room) {
    return kv_bytes_per_token(room.cache_types, 1, hp.n_embd_kv()) * static_cast<uint64_t>(room.n_ctx) *
           static_cast<uint64_t>(std::max(room.n_slots, 0));
}

uint64_t device_compute_bytes(const hparams & hp, const offload_room & room) {
    const auto n = static_cast<uint64_t>(room.n_batch);
    // The residual stream and norm output, Q and the attention output, K and V, the FFN's gate and
    // up, and four int32 per token (positions, visible lengths, window starts, zeros).
    const uint64_t floats = 2ull * hp.n_embd + 2ull * hp.n_embd_q() + 2ull * hp.n_embd_kv() + 2ull * hp.n_ff + 4;
    // The widest input in q8_0: per block of 32, an f32 scale and 32 int8.
    const uint64_t widest = static_cast<uint64_t>(std::max({hp.n_embd, hp.n_embd_q(), hp.n_ff})) / 32;
    const uint64_t scores = static_cast<uint64_t>(hp.n_head) * static_cast<uint64_t>(room.n_ctx) * sizeof(float);
    // Experts: router logits, picks and weights, the picks' gate, up and down, and the down
    // products' q8_0 input for every pick.
    const uint64_t k = static_cast<uint64_t>(hp.n_expert_used);
    const uint64_t experts = hp.n_expert > 0 ? (static_cast<uint64_t>(hp.n_expert) + 2 * k + 2 * k * hp.n_ff +
                                                k * hp.n_embd) * sizeof(float) + (k - 1) * widest * 36
                                             : 0;
    // The same input in q8_K where a K-quant product makes it (per 256: an f32 scale, 256 int8 and
    // 16 int16 sums; CUDA and Vulkan keep it in a scratch buffer of their own).
    const uint64_t widest_k = static_cast<uint64_t>(std::max({hp.n_embd, hp.n_embd_q(), hp.n_ff})) / 256;
    return n * (floats * sizeof(float) + widest * 36 + widest_k * 292 + scores + experts);
}

result<offload_plan> plan_offload(const model & m, const gpu_layers & want, const offload_room & room,
                                  const offload_backend & be) {
    const hparams & hp = m.hp();
    offload_plan p;
    p.backend = std::string(be.name);
    p.device = be.device;
    p.asked = to_string(want);
    p.device_bytes = be.device_bytes;
    p.n_layer = hp.n_layer;
    p.room = room;
    p.cpu_device = be.cpu_device;
    if (want.how == gpu_layers::kind::automatic && be.cpu_device && !want.cpu_device_ok)
        return fail(be.device, " is a CPU device (auto chooses only a GPU; --gpu-layers all or N runs on it)");
    const int32_t asked = want.how == gpu_layers::kind::count ? std::min(want.n, hp.n_layer) : hp.n_layer;
    // The layers that can run on the device are a tail of the model: count it.
    std::string why;
    for (int32_t il = hp.n_layer - 1; il >= 0 && p.n_runnable < asked; --il, ++p.n_runnable) {
        why = unsupported_layer(hp, m.layers()[il], il, be.supports_weight);
        if (!why.empty()) break;
    }
    if (p.n_runnable == 0)
        return fail("the ", be.name, " backend cannot run layer ", hp.n_layer - 1, " of this model (", why, ")");
    if (p.n_runnable < asked && want.how != gpu_layers::kind::automatic)
        return fail("the ", be.name, " backend cannot run layer ", hp.n_layer - p.n_runnable - 1, " of this model (", why,
                    "); at most ", p.n_runnable, " of the last layers can be offloaded");
    if (p.n_runnable < asked)
        p.why_fewer = "the " + std::string(be.name) + " backend cannot run layer " +
                      std::to_string(hp.n_layer - p.n_runnable - 1) + " (" + why + ")";
    p.compute_bytes = device_compute_bytes(hp, room);
    const uint64_t kv = layer_kv_bytes(hp, room);
    int32_t n = p.n_runnable;
    uint64_t used = p.compute_bytes;   // by `auto`'s layers
    if (want.how == gpu_layers::kind::automatic) {
        const uint64_t budget = want.device_memory_cap ? want.device_memory_cap : be.device_bytes;
        p.budget_bytes = static_cast<uint64_t>(static_cast<double>(budget) * k_device_memory_margin);
        int32_t fit = 0;
        for (int32_t il = hp.n_layer - 1; il >= hp.n_layer - n; --il) {
            const uint64_t b = layer_weight_bytes(hp, m.layers()[il], il) + kv;
            if (used + b > p.budget_bytes) break;
            used += b;
            ++fit;
        }
        if (fit == 0)
            return fail("the ", be.name, " device's memory (", mib(budget), ", ", mib(p.budget_bytes),
                        " within the margin) holds none of this model's layers: one takes ",
                        mib(layer_weight_bytes(hp, m.layers()[hp.n_layer - 1], hp.n_layer - 1) + kv), " with its KV rows, and the "
                        "compute buffers ", mib(p.compute_bytes));
        if (fit < n)
            p.why_fewer += (p.why_fewer.empty() ? "" : "; ") + std::to_string(fit) + " of " + std::to_string(n) + " layers fit in " + mib(p.budget_bytes) +
                          " (" + std::to_string(static_cast<int>(k_device_memory_margin * 100)) + "% of " +
                          mib(budget) + (want.device_memory_cap ? ", capped" : "") + ")";
        n = fit;
    }
    p.n_layers = n;
    for (int32_t il = p.first_layer(); il < hp.n_layer; ++il) p.weight_bytes += layer_weight_bytes(hp, m.layers()[il], il);
    p.kv_bytes = kv * static_cast<uint64_t>(n);
    // With every layer there, the output block goes too (only the hidden state's logits come
    // back), where the backend takes its matrix and, for `auto`, it fits beside the layers.
    if (n == hp.n_layer && unsupported_weight(output_needs(m).weights, be.supports_weight).empty()) {
        const uint64_t out = output_weight_bytes(m);
        if (want.how != gpu_layers::kind::automatic || used + out <= p.budget_bytes) {
            p.output = true;
            p.output_bytes = out;
        }
    }
    return p;
}

std::string describe(const offload_plan & p) {
    std::string s = "layers " + std::to_string(p.first_layer()) + "-" + std::to_string(p.n_layer - 1) + " of " +
                    std::to_string(p.n_layer) + (p.output ? " and the output" : "") + " on " + p.device + " (--gpu-layers " + p.asked + "): " +
                    mib(p.total_bytes()) + " of the device's " + mib(p.device_bytes) + " (weights " +
                    mib(p.weight_bytes) + (p.output ? ", output " + mib(p.output_bytes) : std::string()) + ", KV " +
                    mib(p.kv_bytes) + ", compute " + mib(p.compute_bytes) + ")";
    if (!p.why_fewer.empty()) s += "; fewer layers: " + p.why_fewer;
    return s;
}

}  // namespace hearth::inference
