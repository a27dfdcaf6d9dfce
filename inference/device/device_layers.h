// device_layers: the one layer_device every GPU backend runs, a transformer layer's graph written
// once over kernels/device_ops.h (the backends: vulkan_layers.h, cuda_layers.h). The offloaded
// layers' weights are uploaded once; each batch's layers are queued and waited for once; each
// kv_cache's rows of these layers live on the device (kv_device_rows), written there by
// kv_append (the bytes the CPU's quantize_row writes), so only the hidden state crosses per batch.
// Runs llama-style layers (RMS norm, SwiGLU, optional Q/K/V biases) over a cache whose K and V
// types the backend takes (device_ops::takes_cache: Vulkan f16, q8_0, q4_0; CUDA f16).
// Thread-safety: owned by the engine.
#pragma once

#include <cstdint>
#include <memory>

#include "inference/device/layer_device.h"
#include "kernels/device_ops.h"

namespace hearth::inference {

// The last n_layers layers of m on the device behind ops (placement decided by the caller:
// layer_plan.h); an error where the weights do not fit.
result<std::unique_ptr<layer_device>> make_device_layers(const model & m, int32_t n_layers,
                                                         std::shared_ptr<kernels::device_ops> ops);

}  // namespace hearth::inference
