// The Vulkan backend of layer_device: kernels/vulkan's device behind the one layer graph
// (device_layers.h), placed by layer_plan.h with the weight types the shaders decode.
// Thread-safety: owned by the engine.
#pragma once

#if HEARTH_HAVE_VULKAN

#include <memory>

#include "inference/layer_device.h"

namespace hearth::inference {

// The Vulkan device opened, or why there is none ("no Vulkan device: ..." with the loader's or
// the driver's reason).
result<offload_target> open_vulkan_target();

// The model's last layers on it, `auto` keeping room for one cache of n_ctx positions.
result<std::unique_ptr<layer_device>> make_vulkan_layers(const model & m, const gpu_layers & want, int32_t n_ctx);

}  // namespace hearth::inference

#endif
