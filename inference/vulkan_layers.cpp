#include "inference/vulkan_layers.h"

#include "kernels/vulkan/device_ops.h"
#include "kernels/vulkan/ops.h"

namespace hearth::inference {

result<offload_target> open_vulkan_target() {
    auto ops = kernels::vulkan::make_device_ops();
    if (!ops) return fail("no Vulkan device: ", ops.message());
    std::shared_ptr<kernels::device_ops> shared = std::move(*ops);
    offload_backend be{"Vulkan", kernels::vulkan::supports_weight, shared->memory_bytes(), shared->name()};
    return offload_target{std::move(shared), std::move(be)};
}

result<std::unique_ptr<layer_device>> make_vulkan_layers(const model & m, const gpu_layers & want, int32_t n_ctx) {
    auto t = open_vulkan_target();
    if (!t) return t.error();
    auto d = make_offloaded_layers(std::move(*t), m, want, offload_room{n_ctx});
    if (!d) return d.error();
    return std::move(d->device);
}

}  // namespace hearth::inference
