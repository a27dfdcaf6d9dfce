#include "kernels/vulkan/shaders.h"

namespace hearth::kernels::vulkan {

std::span<const uint32_t> find_shader(std::string_view name) {
    for (const embedded_shader & s : embedded_shaders())
        if (s.name == name) return s.words;
    return {};
}

}  // namespace hearth::kernels::vulkan
