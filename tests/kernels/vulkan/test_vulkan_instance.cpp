// The instance's extensions: VK_KHR_portability_enumeration (and its create flag) asked for
// exactly where the loader offers it, so MoltenVK on a Mac is listed and older loaders still
// create an instance.
#include <string>
#include <vector>

#include "kernels/vulkan/instance_extensions.h"
#include "kernels/vulkan/loader.h"
#include "tests/kernels/vulkan/vulkan_test_device.h"

namespace kv = hearth::kernels::vulkan;

namespace {

bool has(const kv::instance_request & r, const std::string & name) {
    for (const char * e : r.extensions)
        if (name == e) return true;
    return false;
}

}  // namespace

TEST_CASE("vulkan instance: portability enumeration is asked for only where the loader offers it",
          "[kernels][vulkan]") {
    const std::string portability = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
    const std::string debug_utils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;

    const auto offered = kv::choose_instance_request({"VK_KHR_surface", portability}, false);
    CHECK(offered.portability_enumeration);
    CHECK(has(offered, portability));
    CHECK(offered.flags == VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR);
    CHECK_FALSE(has(offered, debug_utils));

    const auto absent = kv::choose_instance_request({"VK_KHR_surface", "VK_KHR_get_physical_device_properties2"}, false);
    CHECK_FALSE(absent.portability_enumeration);
    CHECK(absent.extensions.empty());
    CHECK(absent.flags == 0);

    const auto none = kv::choose_instance_request({}, false);
    CHECK_FALSE(none.portability_enumeration);
    CHECK(none.flags == 0);

    // Validation's messenger needs debug utils either way.
    const auto validated = kv::choose_instance_request({portability}, true);
    CHECK(has(validated, debug_utils));
    CHECK(has(validated, portability));
    CHECK(kv::choose_instance_request({}, true).extensions.size() == 1);
}

TEST_CASE("vulkan instance: the device's instance enabled portability enumeration where the loader offers it",
          "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    uint32_t n = 0;
    vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> exts(n);
    vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data());
    bool loader_offers = false;
    for (const auto & e : exts)
        if (std::string(e.extensionName) == VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME) loader_offers = true;
    std::printf("vulkan loader offers %s: %s\n", VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME,
                loader_offers ? "yes" : "no");
    for (auto & td : kv::test::test_devices()) {
        INFO(td.label);
        CHECK(td.dev->caps().portability_enumeration == loader_offers);
        kv::test::require_validation_silent(td);
    }
}
