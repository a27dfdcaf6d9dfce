#include "inference/cuda_layers.h"

#include "inference/device_layers.h"
#include "inference/layer_plan.h"
#include "kernels/cuda/device_ops.h"
#include "kernels/cuda/ops.h"

namespace hearth::inference {

result<std::unique_ptr<layer_device>> make_cuda_layers(const model & m, const gpu_layers & want, int32_t n_ctx) {
    auto ops = kernels::cuda::make_device_ops();
    if (!ops) return ops.error();   // "no CUDA device: ..." with the runtime's reason
    auto n = plan_offload(m, want, n_ctx, {"CUDA", kernels::cuda::supports_weight, (*ops)->memory_bytes()});
    if (!n) return n.error();
    return make_device_layers(m, *n, std::move(*ops));
}

}  // namespace hearth::inference
