// The one include of the Vulkan C API for kernels/vulkan: volk's declarations (VK_NO_PROTOTYPES
// is set by the build), whose entry points are loaded at run time from libvulkan (loader.h).
#pragma once

#include <volk.h>
