// Opens the system's Vulkan loader at run time (volk: libvulkan.so.1, vulkan-1.dll,
// libvulkan.dylib), so a binary on a machine without one starts and runs on the CPU. The
// environment variable HEARTH_VULKAN_LOADER names another loader library to open instead (a
// MoltenVK build's libvulkan, or a path that does not exist, to see the no-loader path).
// Invariants: the library is opened at most once per process; later calls return the first
// call's outcome.
// Thread-safety: safe to call from any thread.
#pragma once

#include "base/result.h"

namespace hearth::kernels::vulkan {

// Ok once the loader's global entry points are available; otherwise an error saying why.
status load_vulkan();

}  // namespace hearth::kernels::vulkan
