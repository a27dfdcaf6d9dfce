// device_registry: the GPU backends of this build, in the order they are tried (CUDA, then
// Vulkan), each by its name and how its device is opened. A backend is a folder under kernels/
// implementing kernels/device_ops.h; adding one (Metal) is that folder and one line in
// device_registry.cpp.
// Thread-safety: immutable.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kernels/device_ops.h"

namespace hearth::inference {

struct device_backend {
    std::string_view name;                                        // "CUDA", "Vulkan"
    // Its first device, or why none ("no CUDA device: ..."). cpu_device_ok false: a CPU device
    // (lavapipe) is refused as none, before anything is built (`--gpu-layers auto`).
    result<std::unique_ptr<kernels::device_ops>> (*open)(bool cpu_device_ok);
    // The devices it sees, none opened (`hearth devices`, the daemon's GPU probe); why none can be.
    result<std::vector<kernels::device_summary>> (*list)();
};

// Empty where the build has no GPU backend.
std::span<const device_backend> device_backends();

inline constexpr std::string_view k_no_gpu_backend =
    "this build has no GPU backend (configure with HEARTH_VULKAN=ON or HEARTH_CUDA=ON)";

}  // namespace hearth::inference
