// The Vulkan backend of layer_device: kernels/vulkan's device behind the one layer graph
// (device_layers.h), placed by layer_plan.h with the weight types the shaders decode.
// Thread-safety: owned by the engine.
#pragma once

#if HEARTH_HAVE_VULKAN

#include <memory>

#include "inference/layer_device.h"

namespace hearth::inference {

result<std::unique_ptr<layer_device>> make_vulkan_layers(const model & m, const gpu_layers & want, int32_t n_ctx);

}  // namespace hearth::inference

#endif
