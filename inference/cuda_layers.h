// The CUDA backend of layer_device: kernels/cuda's device behind the one layer graph
// (device_layers.h), placed by layer_plan.h with the weight types its kernels decode (f32, f16,
// q8_0, q4_0).
// Thread-safety: owned by the engine.
#pragma once

#if HEARTH_HAVE_CUDA

#include <memory>

#include "inference/layer_device.h"

namespace hearth::inference {

// The CUDA device opened, or why there is none ("no CUDA device: ..." with the runtime's reason).
result<offload_target> open_cuda_target();

// The model's last layers on it, `auto` keeping room for one cache of n_ctx positions.
result<std::unique_ptr<layer_device>> make_cuda_layers(const model & m, const gpu_layers & want, int32_t n_ctx);

}  // namespace hearth::inference

#endif
