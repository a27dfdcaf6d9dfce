// The CUDA implementation of layer_device (kernels/cuda), built as the Vulkan one is
// (vulkan_layers.h): the offloaded layers' weights uploaded once, each batch's layers queued on
// one stream and waited for once, the batch's K/V rows written on the device (f16, the CPU's
// rounding) and copied back into the kv_cache, the rows before the batch copied up from it.
// Runs llama-style layers with f32, f16, q8_0 and q4_0 weights over an f16 cache.
// Thread-safety: owned by the engine.
#pragma once

#if HEARTH_HAVE_CUDA

#include <memory>

#include "inference/layer_device.h"

namespace hearth::inference {

result<std::unique_ptr<layer_device>> make_cuda_layers(const model & m, const gpu_layers & want, int32_t n_ctx);

}  // namespace hearth::inference

#endif
