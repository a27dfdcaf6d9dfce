// layer_device: the seam between the forward pass and a compute device, and the layer graph
// (graph/layer_graph.h) run there over kernels/device_ops.h by every backend
// (device_registry.h). The engine runs the first layers on the CPU and hands the residual stream
// to a layer_device for the last ones, as llama.cpp places them: only the batch's hidden state
// crosses, once each way. The model's weights and vectors a layer uses (layer_needs) are
// uploaded once and found by their host address; each batch's operations are queued and waited
// for once (device_layers.cpp runs them; layer_device.cpp opens a device and places the layers).
// With every layer there, the output norm and matrix go too and the logits come back instead;
// the embedding lookup, sampling and the tokenizer stay on the CPU.
// The KV rows of the offloaded layers live on the device: the first batch a kv_cache meets it,
// the device adopts the cache's rows of its layers (kv_device_rows, kv_cache.h), and they stay
// there; the kv_cache reaches them for what the session cache does besides evaluating (chunk
// shifts, slot files, the budget's accounting). A cache of smoothed keys (k_smoothing.h) has K
// multiplied by 1 / s and Q by s before kv_append, as the CPU's layers divide and multiply. make_layer_device() is the one place a device is
// chosen: CUDA, then Vulkan, where the build has them, each placing the layers by layer_plan.h.
// Thread-safety: owned by the engine (the compute worker).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "inference/cache/k_smoothing.h"
#include "inference/cache/kv_cache.h"
#include "inference/device/layer_plan.h"
#include "inference/graph/layer_graph.h"
#include "inference/model/model.h"
#include "kernels/device_ops.h"

namespace hearth::inference {

class layer_device final : private layer_executor {
public:
    // The last layers [first, n_layer) of m on the device behind ops, and the output block where
    // `output` and first is 0; upload_weights() puts what they use there.
    layer_device(const model & m, int32_t first, bool output, std::shared_ptr<kernels::device_ops> ops);
    status upload_weights();

    // "vulkan: llvmpipe (LLVM 15.0.6, 256 bits), layers 3-4 of 5"
    const std::string & describe() const { return describe_; }
    // The weight bytes the device reads in place in the mapped file (import_host), not copied.
    uint64_t imported_bytes() const { return imported_bytes_; }
    // The device runs layers [first_layer(), n_layer).
    int32_t first_layer() const { return first_; }
    // Whether it can hold a cache of these types (the CPU runs the layers otherwise).
    bool takes_cache(const kv_types & t) const {
        const int64_t n_embd_kv = model_.hp().n_embd_kv();
        return ops_->takes_cache(t.k, n_embd_kv) && ops_->takes_cache(t.v, n_embd_kv);
    }
    // Whether it runs the output block too (it runs every layer and the plan placed the output
    // matrix): eval_layers then returns logits instead of the CPU computing them.
    bool runs_output() const { return output_; }

    // x: [n][n_embd], the residual stream before first_layer(), replaced by the one after the
    // last layer. pos, n_kv, kv_start: [n] as the engine has them (positions pos[0] + t;
    // kv_start read on sliding-window layers). Writes the batch's K/V rows of its layers into the
    // cache's rows on the device (adopting them first). logits (only where runs_output()): the
    // output block's logits of rows [first_logit, n) go there ([n - first_logit][n_vocab]); null:
    // none. On an error x and the cache's valid rows are as they were.
    status eval_layers(float * x, int32_t n, const int32_t * pos, const int32_t * n_kv, const int32_t * kv_start,
                       kv_cache & cache, float * logits, int32_t first_logit);

private:
    using buffer_ptr = std::unique_ptr<kernels::device_buffer>;
    struct dev_weight {
        buffer_ptr data;
        kernels::device_weight view() const { return {data.get(), type, n_rows, n_cols, row_bytes}; }
        kernels::tensor_type type{};
        int64_t n_rows = 0, n_cols = 0;
        size_t row_bytes = 0;
    };

    // layer_executor (graph/layer_graph.h), over the batch eval_layers set (device_layers.cpp).
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

    const kernels::device_buffer & buf(act a) const { return *acts_[static_cast<size_t>(a)]; }
    int64_t elements(act a) const { return static_cast<int64_t>(n_) * act_width(model_.hp(), a); }
    const dev_weight & weight_of(const weight & w) const { return weights_.at(w.data); }
    const kernels::device_buffer * vec(const float * v) const { return v ? vectors_.at(v).get() : nullptr; }
    // in ([rows][width]) in q8_0, made once for products with weights of these types where one
    // takes it (as the CPU's matmul_context converts once for Q, K and V); the buffer or null.
    const kernels::device_buffer * q8_for(const kernels::device_buffer & in, int64_t rows, int64_t width,
                                          std::span<const kernels::tensor_type> types);

    result<kv_device_rows *> rows_of(kv_cache & cache);
    status ensure_capacity(int32_t n, int32_t ctx);
    status upload(const layer_use & use);
    status upload_smoothing();
    // After the layers (queued work finished): rows [first, n) of x to the top of x, then the
    // output block over them, its logits downloaded to `logits`.
    status output(float * logits, int32_t first, int32_t n);
    result<buffer_ptr> make_from(const void * data, size_t bytes) const;
    // Weights below this are copied even where they could be imported: each import is a device
    // allocation of its own pages, and norms and biases are a few KiB.
    static constexpr size_t k_import_min_bytes = size_t{64} << 10;

    const model & model_;
    std::shared_ptr<kernels::device_ops> ops_;
    int32_t first_ = 0;
    bool output_ = false;   // runs the output block (every layer here)
    std::string describe_;
    std::unordered_map<const void *, dev_weight> weights_;     // by the host weight's data
    std::unordered_map<const float *, buffer_ptr> vectors_;    // norm weights, biases, RoPE factors
    // Per layer (null where it has no scales): k_smoothing's key and query factors, read where
    // the cache holds smoothed keys. A few KiB a layer, left out of the plan's count.
    std::vector<buffer_ptr> key_factors_, query_factors_;
    uint64_t imported_bytes_ = 0;                              // of weights_, read in place (import_host)
    int32_t n_cap_ = 0;
    // Activations, each [n_cap_][act_width]; pos_, n_kv_, kv_start_, no_window_: [n_cap_] int32;
    // scores_: attention's scratch for n_cap_ tokens over the widest cache seen.
    std::array<buffer_ptr, k_act_count> acts_;
    // logits: [n_logits_cap_][n_vocab], made for the rows first asked (one, a decode step's or a
    // prompt's last; more for eval_steps).
    int32_t n_logits_cap_ = 0;
    buffer_ptr pos_, n_kv_, kv_start_, no_window_, scores_;
    buffer_ptr x_q8_;   // the input of the next products in q8_0, where their weights take it
    // The experts' scratch (models with experts): router logits [n][n_expert], picks and their
    // weights [n][n_used], the picks' gate and up [n][n_used][n_ff] and down [n][n_used][n_embd].
    buffer_ptr logits_, ids_, pick_weights_, pick_gate_, pick_up_, pick_down_;
    // The batch eval_layers runs.
    int32_t n_ = 0, pos0_ = 0, n_ctx_ = 0;
    kv_cache * cache_ = nullptr;
    kv_device_rows * rows_ = nullptr;
};

// An opened device: its operations, and what placement needs to know of it.
struct offload_target {
    std::shared_ptr<kernels::device_ops> ops;
    offload_backend backend;
};

// The layers on a device and the plan that placed them.
struct offloaded_layers {
    std::unique_ptr<layer_device> device;
    offload_plan plan;
};

// What one backend of this build would do with the model's last layers: its plan, or why it
// cannot take them (no loader or device, a layer it cannot run, too little memory).
struct backend_plan {
    std::string backend;             // "CUDA", "Vulkan"
    std::optional<offload_plan> plan;
    std::string why_not;             // when there is no plan
};

// Every backend of this build in the order make_layer_device tries them (CUDA, then Vulkan), each
// device opened and the layers planned but nothing uploaded: the first plan is the one
// make_layer_device would run. Empty where the build has no GPU backend.
std::vector<backend_plan> plan_layer_devices(const model & m, const gpu_layers & want, const offload_room & room);

// The device for the model's last layers and its plan, or an error saying why there is none (no
// GPU backend in this build, no loader or device, a layer the device cannot run, the weights did
// not fit). `auto` keeps room for room's caches and batch.
result<offloaded_layers> make_layer_device(const model & m, const gpu_layers & want, const offload_room & room);

// The same on the named backend only ("Vulkan", "CUDA"): the tests of one backend.
result<offloaded_layers> make_layer_device_on(std::string_view backend, const model & m, const gpu_layers & want,
                                              const offload_room & room);

// The last n_layers layers of m on the device behind ops, and the output block where `output`
// and every layer is there (placement decided by the caller: layer_plan.h), the weights
// uploaded; an error where they do not fit.
result<std::unique_ptr<layer_device>> make_device_layers(const model & m, int32_t n_layers, bool output,
                                                         std::shared_ptr<kernels::device_ops> ops);

// The layers an opened device runs as want and room place them, the weights uploaded.
result<offloaded_layers> make_offloaded_layers(offload_target target, const model & m, const gpu_layers & want,
                                               const offload_room & room);

}  // namespace hearth::inference
