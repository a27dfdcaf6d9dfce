#include "kernels/vulkan/loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "kernels/vulkan/vk.h"

namespace hearth::kernels::vulkan {
namespace {

status open_loader() {
    const char * named = std::getenv("HEARTH_VULKAN_LOADER");
    if (!named || !*named) {
        if (volkInitialize() != VK_SUCCESS)
            return fail("no Vulkan loader on this machine (libvulkan.so.1 could not be opened; "
                        "install the driver's Vulkan support, on Debian libvulkan1 and mesa-vulkan-drivers)");
        return {};
    }
    // The library stays open for the life of the process, as volk's own does.
    void * lib = dlopen(named, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return fail("no Vulkan loader at HEARTH_VULKAN_LOADER='", named, "': ", dlerror());
    auto * get = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    if (!get) return fail("HEARTH_VULKAN_LOADER='", named, "' has no vkGetInstanceProcAddr: not a Vulkan loader");
    volkInitializeCustom(get);
    return {};
}

}  // namespace

status load_vulkan() {
    static std::once_flag once;
    static status outcome;
    std::call_once(once, [] { outcome = open_loader(); });
    return outcome;
}

}  // namespace hearth::kernels::vulkan
