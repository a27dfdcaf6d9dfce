#include "kernels/vulkan/instance_extensions.h"

#include <algorithm>

namespace hearth::kernels::vulkan {

instance_request choose_instance_request(const std::vector<std::string> & offered, bool debug_utils) {
    instance_request r;
    if (debug_utils) r.extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    const bool portability = std::find(offered.begin(), offered.end(),
                                       VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME) != offered.end();
    if (portability) {
        r.extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
        r.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
        r.portability_enumeration = true;
    }
    return r;
}

}  // namespace hearth::kernels::vulkan
