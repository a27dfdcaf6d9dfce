#include "inference/device/device_registry.h"

#include <array>

#if HEARTH_HAVE_CUDA
#include "kernels/cuda/device_ops.h"
#endif
#if HEARTH_HAVE_VULKAN
#include "kernels/vulkan/device_ops.h"
#endif

namespace hearth::inference {

std::span<const device_backend> device_backends() {
    static constexpr std::array backends = {
#if HEARTH_HAVE_CUDA
        device_backend{"CUDA", [](bool) { return kernels::cuda::make_device_ops(); },   // never a CPU
                       &kernels::cuda::list_devices},
#endif
#if HEARTH_HAVE_VULKAN
        device_backend{"Vulkan", [](bool cpu_device_ok) {
                           return kernels::vulkan::make_device_ops({.cpu_device_ok = cpu_device_ok});
                       },
                       &kernels::vulkan::list_devices},
#endif
        device_backend{},   // the end (an array of no backends cannot deduce its type)
    };
    return std::span(backends.data(), backends.size() - 1);
}

}  // namespace hearth::inference
