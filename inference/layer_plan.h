// What every layer_device backend decides the same way: which layers of a model it can run (a
// tail of llama-style layers over weight types it decodes) and how many of them `--gpu-layers`
// gives it, `auto` planning the layers' weights plus an f16 cache of the context within 80% of
// the device's memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "inference/layer_device.h"

namespace hearth::inference {

struct offload_backend {
    std::string_view name;                        // "Vulkan", "CUDA"
    bool (*supports_weight)(kernels::tensor_type);
    uint64_t device_bytes;                        // the memory `auto` plans within (before the margin)
};

// Why layer L cannot run on the backend ("LayerNorm", "a q5_K weight"), or "" where it can.
std::string unsupported_layer(const hparams & hp, const layer & L, bool (*supports_weight)(kernels::tensor_type));

// Device bytes of layer L: its weights, norms and an f16 K/V cache of n_ctx positions.
uint64_t layer_device_bytes(const hparams & hp, const layer & L, int32_t n_ctx);

// How many of the last layers go to the device, or why none can.
result<int32_t> plan_offload(const model & m, const gpu_layers & want, int32_t n_ctx, const offload_backend & b);

}  // namespace hearth::inference
