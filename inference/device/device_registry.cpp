#include "inference/device/device_registry.h"

#include <array>
#include <cstdlib>
#include <string_view>

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
                           // HEARTH_VULKAN_IMPORT_HOST=0: weights copied even on shared memory (measuring both).
                           const char * import = std::getenv("HEARTH_VULKAN_IMPORT_HOST");
                           return kernels::vulkan::make_device_ops(
                               {.cpu_device_ok = cpu_device_ok, .import_host = !import || std::string_view(import) != "0"});
                       },
                       &kernels::vulkan::list_devices},
#endif
        device_backend{},   // the end (an array of no backends cannot deduce its type)
    };
    return std::span(backends.data(), backends.size() - 1);
}

}  // namespace hearth::inference
