#include "kernels/vulkan/device.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/vulkan/instance_extensions.h"
#include "kernels/vulkan/loader.h"
#include "kernels/vulkan/pipelines.h"

namespace hearth::kernels::vulkan {
namespace {

// VK_KHR_PORTABILITY_SUBSET_EXTENSION_NAME, which the headers define only with the beta extensions.
constexpr const char * k_portability_subset = "VK_KHR_portability_subset";

constexpr const char * k_validation_layer = "VK_LAYER_KHRONOS_validation";

bool has_layer(const char * name) {
    uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> layers(n);
    vkEnumerateInstanceLayerProperties(&n, layers.data());
    for (const auto & l : layers)
        if (std::strcmp(l.layerName, name) == 0) return true;
    return false;
}

std::vector<std::string> instance_extensions() {
    uint32_t n = 0;
    vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> exts(n);
    vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data());
    std::vector<std::string> names;
    for (uint32_t i = 0; i < n; ++i) names.emplace_back(exts[i].extensionName);
    return names;
}

bool has_device_extension(VkPhysicalDevice pd, const char * name) {
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> exts(n);
    vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
    for (const auto & e : exts)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

// The first queue family with compute, or -1.
int32_t compute_family(VkPhysicalDevice pd) {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
    std::vector<VkQueueFamilyProperties> fams(n);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fams.data());
    for (uint32_t i = 0; i < n; ++i)
        if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return static_cast<int32_t>(i);
    return -1;
}

// The largest device-local heap of a memory description.
uint64_t largest_local_heap(const VkPhysicalDeviceMemoryProperties & mem) {
    uint64_t bytes = 0;
    for (uint32_t h = 0; h < mem.memoryHeapCount; ++h)
        if (mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) bytes = std::max<uint64_t>(bytes, mem.memoryHeaps[h].size);
    return bytes;
}

// A Vulkan 1.2 instance with the request's extensions and flags and these layers, its functions loaded.
status create_instance(const instance_request & request, const std::vector<const char *> & layers, VkInstance & out) {
    uint32_t loader_version = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loader_version);
    if (loader_version < VK_API_VERSION_1_2) return fail("the Vulkan loader is older than 1.2");
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "hearth";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.flags = request.flags;
    ici.pApplicationInfo = &app;
    ici.enabledLayerCount = static_cast<uint32_t>(layers.size());
    ici.ppEnabledLayerNames = layers.data();
    ici.enabledExtensionCount = static_cast<uint32_t>(request.extensions.size());
    ici.ppEnabledExtensionNames = request.extensions.data();
    if (status s = vk_check(vkCreateInstance(&ici, nullptr, &out), "vkCreateInstance"); !s) return s;
    volkLoadInstanceOnly(out);
    return {};
}

int type_rank(VkPhysicalDeviceType t) {   // lower is preferred
    switch (t) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
        default: return 4;
    }
}

}  // namespace

status vk_check(VkResult r, const char * what) {
    if (r == VK_SUCCESS) return {};
    return fail(what, " failed: VkResult ", static_cast<int>(r));
}

result<std::unique_ptr<device>> device::create(const device_options & options) {
    if (status s = load_vulkan(); !s) return s.error();
    std::unique_ptr<device> d(new device());
    if (status s = d->init(options); !s) return s.error();
    return d;
}

result<std::vector<device_summary>> device::list() {
    if (status s = load_vulkan(); !s) return s.error();
    VkInstance instance = VK_NULL_HANDLE;
    if (status s = create_instance(choose_instance_request(instance_extensions(), false), {}, instance); !s)
        return s.error();
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> pds(n);
    vkEnumeratePhysicalDevices(instance, &n, pds.data());
    std::vector<device_summary> out;
    for (VkPhysicalDevice pd : pds) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(pd, &p);
        if (p.apiVersion < VK_API_VERSION_1_2 || compute_family(pd) < 0) continue;
        VkPhysicalDeviceMemoryProperties mem;
        vkGetPhysicalDeviceMemoryProperties(pd, &mem);
        out.push_back({p.deviceName, p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU, largest_local_heap(mem)});
    }
    vkDestroyInstance(instance, nullptr);
    return out;
}

VKAPI_ATTR VkBool32 VKAPI_CALL device::on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT * data, void * self) {
    auto * d = static_cast<device *>(self);
    ++d->validation_messages_;
    d->last_validation_message_ = data && data->pMessage ? data->pMessage : "(no message)";
    return VK_FALSE;
}

status device::init(const device_options & options) {
    std::vector<const char *> layers;
    if (options.validation) {
        if (!has_layer(k_validation_layer))
            return fail("validation asked for but ", k_validation_layer,
                        " is not installed (Debian: vulkan-validationlayers)");
        layers.push_back(k_validation_layer);
    }
    const instance_request request = choose_instance_request(instance_extensions(), options.validation);
    caps_.portability_enumeration = request.portability_enumeration;
    if (status s = create_instance(request, layers, instance_); !s) return s;

    if (options.validation) {
        VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
        mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
        mci.pfnUserCallback = &device::on_validation;
        mci.pUserData = this;
        if (status s = vk_check(vkCreateDebugUtilsMessengerEXT(instance_, &mci, nullptr, &messenger_),
                                "vkCreateDebugUtilsMessengerEXT");
            !s)
            return s;
    }

    uint32_t n = 0;
    vkEnumeratePhysicalDevices(instance_, &n, nullptr);
    std::vector<VkPhysicalDevice> pds(n);
    vkEnumeratePhysicalDevices(instance_, &n, pds.data());
    int32_t chosen = -1;
    for (uint32_t i = 0; i < n; ++i) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(pds[i], &p);
        if (p.apiVersion < VK_API_VERSION_1_2 || compute_family(pds[i]) < 0) continue;
        if (options.index >= 0) {
            if (static_cast<int32_t>(i) == options.index) chosen = static_cast<int32_t>(i);
            continue;
        }
        if (chosen < 0) {
            chosen = static_cast<int32_t>(i);
        } else {
            VkPhysicalDeviceProperties best;
            vkGetPhysicalDeviceProperties(pds[chosen], &best);
            if (type_rank(p.deviceType) < type_rank(best.deviceType)) chosen = static_cast<int32_t>(i);
        }
    }
    if (chosen < 0) {
        if (options.index >= 0)
            return fail("no Vulkan 1.2 compute device at index ", options.index, " (", n, " devices)");
        return fail("no Vulkan 1.2 device with a compute queue (", n, " devices found)");
    }
    physical_ = pds[chosen];
    queue_family_ = static_cast<uint32_t>(compute_family(physical_));
    if (!options.cpu_device_ok) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(physical_, &p);
        if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) return fail(p.deviceName, " is a CPU device");
    }

    // What the device has.
    VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props2.pNext = &subgroup;
    vkGetPhysicalDeviceProperties2(physical_, &props2);
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 feats2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    feats2.pNext = &f12;
    vkGetPhysicalDeviceFeatures2(physical_, &feats2);
    vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

    const VkPhysicalDeviceProperties & p = props2.properties;
    caps_.name = p.deviceName;
    caps_.type = p.deviceType;
    caps_.api_version = p.apiVersion;
    caps_.subgroup_size = subgroup.subgroupSize;
    caps_.subgroup_arithmetic = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                                (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                                (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT);
    caps_.shader_float16 = f12.shaderFloat16;
    caps_.shader_float64 = feats2.features.shaderFloat64;
    caps_.shader_int8 = f12.shaderInt8;
    if (has_device_extension(physical_, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME)) {
        VkPhysicalDeviceShaderIntegerDotProductFeatures idot{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
        VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
        f.pNext = &idot;
        vkGetPhysicalDeviceFeatures2(physical_, &f);
        caps_.integer_dot_product = idot.shaderIntegerDotProduct;
    }
    caps_.max_workgroup_count_x = p.limits.maxComputeWorkGroupCount[0];
    caps_.device_local_bytes = largest_local_heap(memory_);
    for (uint32_t t = 0; t < memory_.memoryTypeCount; ++t) {
        const VkMemoryPropertyFlags f = memory_.memoryTypes[t].propertyFlags;
        if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
            caps_.host_visible_device_memory = true;
    }
    {
        uint32_t nf = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(physical_, &nf, nullptr);
        std::vector<VkQueueFamilyProperties> fams(nf);
        vkGetPhysicalDeviceQueueFamilyProperties(physical_, &nf, fams.data());
        caps_.timestamp_period_ns = fams[queue_family_].timestampValidBits ? p.limits.timestampPeriod : 0.0;
    }
    uses_subgroup_ = options.allow_subgroup && caps_.subgroup_arithmetic;
    uses_integer_dot_ = options.allow_integer_dot && caps_.integer_dot_product;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = queue_family_;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    VkPhysicalDeviceFeatures enabled{};
    enabled.shaderFloat64 = caps_.shader_float64 ? VK_TRUE : VK_FALSE;
    dci.pEnabledFeatures = &enabled;
    std::vector<const char *> extensions;
    // A portability implementation (MoltenVK) must be told the application knows it is one.
    if (has_device_extension(physical_, k_portability_subset)) extensions.push_back(k_portability_subset);
    // The integer dot product's extension and feature, for the _idot products (pipelines.cpp).
    VkPhysicalDeviceShaderIntegerDotProductFeatures idot{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
    if (uses_integer_dot_) {
        idot.shaderIntegerDotProduct = VK_TRUE;
        idot.pNext = const_cast<void *>(dci.pNext);
        dci.pNext = &idot;
        extensions.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    }
    // Weights imported from the mapped file where the device shares the host's memory (buffer.h).
    const bool shares_memory = caps_.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU || caps_.type == VK_PHYSICAL_DEVICE_TYPE_CPU;
    uint64_t import_alignment = 0;
    if (options.import_host && shares_memory &&
        has_device_extension(physical_, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) {
        VkPhysicalDeviceExternalMemoryHostPropertiesEXT host{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
        VkPhysicalDeviceProperties2 hp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
        hp.pNext = &host;
        vkGetPhysicalDeviceProperties2(physical_, &hp);
        import_alignment = host.minImportedHostPointerAlignment;
        extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    }
    dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    dci.ppEnabledExtensionNames = extensions.data();
    if (status s = vk_check(vkCreateDevice(physical_, &dci, nullptr, &device_), "vkCreateDevice"); !s) return s;
    volkLoadDevice(device_);
    caps_.host_import_alignment = import_alignment;
    vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = queue_family_;
    if (status s = vk_check(vkCreateCommandPool(device_, &pci, nullptr, &command_pool_), "vkCreateCommandPool"); !s)
        return s;
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (status s = vk_check(vkCreateFence(device_, &fci, nullptr, &fence_), "vkCreateFence"); !s) return s;

    auto set = pipeline_set::create(*this);
    if (!set) return set.error();
    pipelines_ = std::move(*set);
    return {};
}

device::~device() {
    if (device_) {
        vkDeviceWaitIdle(device_);
        pipelines_.reset();
        if (fence_) vkDestroyFence(device_, fence_, nullptr);
        if (command_pool_) vkDestroyCommandPool(device_, command_pool_, nullptr);
        vkDestroyDevice(device_, nullptr);
    }
    if (messenger_) vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
    if (instance_) vkDestroyInstance(instance_, nullptr);
}

int32_t device::memory_type(uint32_t type_bits, VkMemoryPropertyFlags want) const {
    for (uint32_t t = 0; t < memory_.memoryTypeCount; ++t)
        if ((type_bits & (1u << t)) && (memory_.memoryTypes[t].propertyFlags & want) == want)
            return static_cast<int32_t>(t);
    return -1;
}

result<VkCommandBuffer> device::begin_one_time() const {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = command_pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    if (status s = vk_check(vkAllocateCommandBuffers(device_, &ai, &cb), "vkAllocateCommandBuffers"); !s)
        return s.error();
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cb, &bi);
    return cb;
}

status device::submit_and_wait(VkCommandBuffer cb) const {
    vkEndCommandBuffer(cb);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    status s = vk_check(vkQueueSubmit(queue_, 1, &si, fence_), "vkQueueSubmit");
    if (s) s = vk_check(vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    vkResetFences(device_, 1, &fence_);
    vkFreeCommandBuffers(device_, command_pool_, 1, &cb);
    return s;
}

}  // namespace hearth::kernels::vulkan
