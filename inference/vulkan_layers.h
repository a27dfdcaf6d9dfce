// The Vulkan implementation of layer_device (kernels/vulkan): the offloaded layers' weights are
// uploaded once, each batch runs all of them in one submission, and the K/V rows of the batch are
// written on the device (kv_append_f16, the CPU's f16 rounding bit for bit) and copied back into
// the kv_cache. Rows before the batch are copied up from the kv_cache every batch (the host
// mirror: correct for every session-cache operation; a device-resident cache is the next step).
// Runs llama-style layers (RMS norm, SwiGLU, optional Q/K/V biases) over an f16 cache.
// Thread-safety: owned by the engine.
#pragma once

#if HEARTH_HAVE_VULKAN

#include <memory>

#include "inference/layer_device.h"

namespace hearth::inference {

result<std::unique_ptr<layer_device>> make_vulkan_layers(const model & m, const gpu_layers & want, int32_t n_ctx);

}  // namespace hearth::inference

#endif
