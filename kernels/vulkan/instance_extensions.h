// Which instance extensions and create flags hearth asks the Vulkan loader for, chosen from the
// names the loader offers. A pure function, so the choice is tested without a loader.
// VK_KHR_portability_enumeration: since loader 1.3.216 a portability driver (MoltenVK on a Mac)
// is listed only when the instance enables the extension and sets the ENUMERATE_PORTABILITY flag;
// a loader that does not offer it must not be asked for it (vkCreateInstance would fail).
#pragma once

#include <string>
#include <vector>

#include "kernels/vulkan/vk.h"

namespace hearth::kernels::vulkan {

struct instance_request {
    std::vector<const char *> extensions;   // static names (the API's macros), for ppEnabledExtensionNames
    VkInstanceCreateFlags flags = 0;
    bool portability_enumeration = false;   // VK_KHR_portability_enumeration enabled, flag set
};

// `offered`: the names vkEnumerateInstanceExtensionProperties reports; `debug_utils`: validation
// is on and wants VK_EXT_debug_utils (its messenger counts the messages).
instance_request choose_instance_request(const std::vector<std::string> & offered, bool debug_utils);

}  // namespace hearth::kernels::vulkan
