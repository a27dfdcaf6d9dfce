// Placement: how many of a model's last layers go to a compute device, decided the same way for
// every backend before anything is uploaded. `--gpu-layers N|all|auto` asks (gpu_layers); the
// plan answers with the layers it places and the device memory they take: the layers' weights,
// their KV rows for the slots and context the caller keeps room for, and the compute buffers of
// one batch. `auto` places as many layers as fit within 80% of the device's memory (the margin
// is for the driver and for what the estimate misses), fewer when they do not, and says why.
// Thread-safety: pure functions over an immutable model.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "inference/cache/kv_cache.h"
#include "inference/model/model.h"
#include "kernels/tensor_type.h"

namespace hearth::inference {

// How many of the last layers go to the device: "0" (none), "N", "all" or "auto" (as many as fit
// in the device's memory with a margin, on a real GPU only; the default).
struct gpu_layers {
    enum class kind { count, all, automatic } how = kind::count;
    int32_t n = 0;
    uint64_t device_memory_cap = 0;   // `auto` plans for at most this much device memory (0: the device's)
    bool cpu_device_ok = false;       // `auto` may place layers on a CPU device (the tests, on lavapipe)
};
result<gpu_layers> parse_gpu_layers(std::string_view text);
// What --gpu-layers, config gpu-layers and load_options::gpu_layers are when not given.
inline constexpr const char * k_default_gpu_layers = "auto";
// "auto", "all", "3": the text parse_gpu_layers reads.
std::string to_string(const gpu_layers & g);

// What placement needs to know of a device (made from its device_ops by layer_device.cpp; the
// tests state one without a device).
struct offload_backend {
    std::string_view name;                                    // "Vulkan", "CUDA"
    std::function<bool(kernels::tensor_type)> supports_weight;
    uint64_t device_bytes;                                    // the memory `auto` plans within (before the margin)
    std::string device;                                       // "vulkan: llvmpipe (LLVM 15.0.6, 256 bits)"
    bool cpu_device = false;                                  // the CPU behind a GPU API (lavapipe): `auto` refuses it
};

// What the device keeps room for besides the layers' weights.
struct offload_room {
    int32_t n_ctx = 0;                                        // positions per KV cache
    int32_t n_slots = 1;                                      // KV caches of n_ctx positions
    int32_t n_batch = 256;                                    // tokens per batch (the compute buffers)
    kv_types cache_types = kernels::tensor_type::f16;         // of those caches
};

// The plan: layers [first_layer(), n_layer) on the device and the device memory they take.
struct offload_plan {
    std::string backend;              // "Vulkan"
    std::string device;               // the device's name
    std::string asked;                // what --gpu-layers said: "auto", "all", "3"
    bool cpu_device = false;          // the device is the CPU behind a GPU API (lavapipe)
    uint64_t device_bytes = 0;        // the device's memory as the backend reports it
    uint64_t budget_bytes = 0;        // what `auto` planned within: that (or the cap) less the margin; 0 for N and all
    int32_t n_layer = 0;              // the model's layers
    int32_t n_layers = 0;             // offloaded
    int32_t n_runnable = 0;           // of the last layers, how many the backend can run
    uint64_t weight_bytes = 0;        // the offloaded layers' weights, norms and biases
    bool output = false;              // the output norm and matrix too (every layer is offloaded)
    uint64_t output_bytes = 0;        // their bytes, and their logits' buffer
    uint64_t kv_bytes = 0;            // their KV rows for room.n_slots caches of room.n_ctx positions
    uint64_t compute_bytes = 0;       // activations and attention scores of one batch
    offload_room room;
    std::string why_fewer;            // why fewer layers than asked ("" when all asked for are placed)

    int32_t first_layer() const { return n_layer - n_layers; }
    uint64_t total_bytes() const { return weight_bytes + output_bytes + kv_bytes + compute_bytes; }
    // Whether the plan fits the device's memory (N and all are placed whether or not they do).
    bool fits() const { return total_bytes() <= device_bytes; }
};

inline constexpr double k_device_memory_margin = 0.8;   // `auto` plans within 80% of the device's memory

// Why layer il (L) cannot run on a backend with these weight formats ("a q5_K weight", "a head
// size over 256"), or "" where it can: what the layer graph uses (layer_graph.h's layer_needs)
// against what the backend has. Every operation is in every backend (kernels/device_ops.h).
std::string unsupported_layer(const hparams & hp, const layer & L, int32_t il,
                              const std::function<bool(kernels::tensor_type)> & supports_weight);

// Device bytes of layer il's weights and vectors (norms, biases, RoPE factors) as the graph uses them.
uint64_t layer_weight_bytes(const hparams & hp, const layer & L, int32_t il);
// Device bytes of the output norm and matrix and of their logits' buffer (k_output_logit_rows rows).
uint64_t output_weight_bytes(const model & m);
inline constexpr int64_t k_output_logit_rows = 16;   // a decode step's, a prompt's last, a few verified guesses
// Device bytes of one layer's K and V rows for room's caches.
uint64_t layer_kv_bytes(const hparams & hp, const offload_room & room);
// Device bytes of the layer graph's buffers for one batch of room.n_batch tokens over room.n_ctx
// positions (layer_device: the activations, their q8_0 form and the attention scores).
uint64_t device_compute_bytes(const hparams & hp, const offload_room & room);

// How many of the last layers go to the device, or why none can. `auto` places nothing on a CPU
// device ("vulkan: llvmpipe (...) is a CPU device"): it would run slower than the CPU's kernels.
result<offload_plan> plan_offload(const model & m, const gpu_layers & want, const offload_room & room,
                                  const offload_backend & b);

// "layers 3-4 of 5 on vulkan: llvmpipe (...), 1.2 MiB of 2048 MiB (weights ..., KV ..., compute ...)"
std::string describe(const offload_plan & p);

}  // namespace hearth::inference
