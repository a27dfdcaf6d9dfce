// layer_device: the seam between the forward pass and a compute device. The engine runs the
// first layers on the CPU (its own kernels) and hands the residual stream to a layer_device for
// the last ones, as llama.cpp places them: only the batch's hidden state crosses, once each way.
// The embedding lookup, the output norm and matrix, sampling and the tokenizer stay on the CPU.
// The KV rows of the offloaded layers live on the device: the first batch a kv_cache meets it,
// the device adopts the cache's rows of its layers (kv_device_rows, kv_cache.h), and they stay
// there; the kv_cache reaches them for what the session cache does besides evaluating (chunk
// shifts, slot files, the budget's accounting). make_layer_device() is the one place a device is
// chosen: CUDA, then Vulkan, where the build has them, each placing the layers by layer_plan.h.
// Thread-safety: owned by the engine (the compute worker).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "inference/cache/kv_cache.h"
#include "inference/device/layer_plan.h"
#include "inference/model/model.h"

namespace hearth::kernels {
class device_ops;
}

namespace hearth::inference {

class layer_device {
public:
    virtual ~layer_device() = default;

    // "vulkan: llvmpipe (LLVM 15.0.6, 256 bits), layers 3-4 of 5"
    virtual const std::string & describe() const = 0;
    // The device runs layers [first_layer(), n_layer).
    virtual int32_t first_layer() const = 0;
    // Whether it can hold a cache of these types (the CPU runs the layers otherwise).
    virtual bool takes_cache(const kv_types & t) const = 0;

    // x: [n][n_embd], the residual stream before first_layer(), replaced by the one after the
    // last layer. pos, n_kv, kv_start: [n] as the engine has them (positions pos[0] + t;
    // kv_start read on sliding-window layers). Writes the batch's K/V rows of its layers into the
    // cache's rows on the device (adopting them first). On an error x and the cache's valid rows
    // are as they were.
    virtual status eval_layers(float * x, int32_t n, const int32_t * pos, const int32_t * n_kv,
                               const int32_t * kv_start, kv_cache & cache) = 0;
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

// The layers an opened device runs as want and room place them, the weights uploaded.
result<offloaded_layers> make_offloaded_layers(offload_target target, const model & m, const gpu_layers & want,
                                               const offload_room & room);

}  // namespace hearth::inference
