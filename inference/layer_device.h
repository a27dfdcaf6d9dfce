// layer_device: the seam between the forward pass and a compute device. The engine runs the
// first layers on the CPU (its own kernels) and hands the residual stream to a layer_device for
// the last ones, as llama.cpp places them: only the batch's hidden state crosses, once each way.
// The embedding lookup, the output norm and matrix, sampling and the tokenizer stay on the CPU.
// The KV rows of the offloaded layers live on the device: the first batch a kv_cache meets it,
// the device adopts the cache's rows of its layers (kv_device_rows, kv_cache.h), and they stay
// there; the kv_cache reaches them for what the session cache does besides evaluating (chunk
// shifts, slot files, the budget's accounting). make_layer_device() is the one place a device is
// chosen: CUDA, then Vulkan, where the build has them.
// Thread-safety: owned by the engine (the compute worker).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "inference/kv_cache.h"
#include "inference/model.h"

namespace hearth::inference {

class layer_device {
public:
    virtual ~layer_device() = default;

    // "vulkan: llvmpipe (LLVM 15.0.6, 256 bits), layers 3-4 of 5"
    virtual const std::string & describe() const = 0;
    // The device runs layers [first_layer(), n_layer).
    virtual int32_t first_layer() const = 0;
    // Whether it can hold a cache of this type (the CPU runs the layers otherwise).
    virtual bool takes_cache(kernels::tensor_type t) const = 0;

    // x: [n][n_embd], the residual stream before first_layer(), replaced by the one after the
    // last layer. pos, n_kv, kv_start: [n] as the engine has them (positions pos[0] + t;
    // kv_start read on sliding-window layers). Writes the batch's K/V rows of its layers into the
    // cache's rows on the device (adopting them first). On an error x and the cache's valid rows
    // are as they were.
    virtual status eval_layers(float * x, int32_t n, const int32_t * pos, const int32_t * n_kv,
                               const int32_t * kv_start, kv_cache & cache) = 0;
};

// How many of the last layers go to the device: "0" (none), "N", "all" or "auto" (as many as fit
// in the device's memory with a margin).
struct gpu_layers {
    enum class kind { count, all, automatic } how = kind::count;
    int32_t n = 0;
    uint64_t device_memory_cap = 0;   // `auto` plans for at most this much device memory (0: the device's)
};
result<gpu_layers> parse_gpu_layers(std::string_view text);

// The device for the model's last layers, or an error saying why there is none (no GPU backend in
// this build, no loader or device, a layer the device cannot run). With `auto`, n_ctx is the
// context the plan keeps room for.
result<std::unique_ptr<layer_device>> make_layer_device(const model & m, const gpu_layers & want, int32_t n_ctx);

}  // namespace hearth::inference
