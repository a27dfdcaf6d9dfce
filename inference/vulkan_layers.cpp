#include "inference/vulkan_layers.h"

#include "inference/device_layers.h"
#include "inference/layer_plan.h"
#include "kernels/vulkan/device_ops.h"
#include "kernels/vulkan/ops.h"

namespace hearth::inference {

result<std::unique_ptr<layer_device>> make_vulkan_layers(const model & m, const gpu_layers & want, int32_t n_ctx) {
    auto ops = kernels::vulkan::make_device_ops();
    if (!ops) return fail("no Vulkan device: ", ops.message());
    auto n = plan_offload(m, want, n_ctx, {"Vulkan", kernels::vulkan::supports_weight, (*ops)->memory_bytes()});
    if (!n) return n.error();
    return make_device_layers(m, *n, std::move(*ops));
}

}  // namespace hearth::inference
