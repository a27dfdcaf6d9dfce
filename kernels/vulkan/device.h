// One Vulkan compute device: the instance, the physical device chosen, one compute queue, a
// command pool and the compute pipelines of every embedded shader (built once at creation, so a
// device that exists can run every operation). With validation on, the Khronos validation layer
// checks every call and its messages are counted (the tests require none).
// Invariants: the physical device has a compute queue and Vulkan 1.2; pipelines() holds, for each
// operation, the subgroup variant where the device has subgroup arithmetic in compute shaders
// (and it is allowed), the shared-memory variant otherwise; rms_norm and the f16 matmul sum in
// double where the device has shaderFloat64, as the CPU does; the products on quantized
// activations use the device's integer dot product where it has one (and it is allowed), with
// shaderIntegerDotProduct enabled, scalar multiply-adds otherwise (the same sums).
// Thread-safety: one owner; the queue is used by one stream at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "kernels/device_ops.h"
#include "kernels/vulkan/vk.h"

namespace hearth::kernels::vulkan {

class pipeline_set;

struct device_options {
    bool validation = false;       // VK_LAYER_KHRONOS_validation, messages counted
    bool allow_subgroup = true;    // false: the shared-memory variants even where subgroups exist
    bool allow_integer_dot = true; // false: scalar multiply-adds even where integer dot products exist
    int32_t index = -1;            // physical device index; -1: the first discrete GPU, else integrated, else any
    // false: refuse a CPU device (lavapipe, SwiftShader) before building anything, so `--gpu-layers
    // auto` on a machine without a GPU costs no pipeline builds.
    bool cpu_device_ok = true;
    bool import_host = true;       // false: never import host memory (weights are copied as on a discrete GPU)
};

struct device_caps {
    std::string name;                   // "llvmpipe (LLVM 15.0.6, 256 bits)"
    VkPhysicalDeviceType type;
    uint32_t api_version;
    uint32_t subgroup_size;
    bool subgroup_arithmetic;           // subgroupAdd/Max in compute shaders
    bool shader_float16;
    bool shader_float64;                // double in shaders (enabled where present: rms_norm sums in it)
    bool shader_int8;
    bool integer_dot_product;           // VK_KHR_shader_integer_dot_product with shaderIntegerDotProduct
    bool host_visible_device_memory;    // device-local memory the host can map (integrated, unified)
    uint64_t device_local_bytes;        // the largest device-local heap
    double timestamp_period_ns;         // 0 where the queue has no timestamps
    uint32_t max_workgroup_count_x;
    bool portability_enumeration;       // the instance enabled VK_KHR_portability_enumeration (the loader offered it)
    // VK_EXT_external_memory_host's minImportedHostPointerAlignment where the device shares memory
    // with the host (integrated, CPU: MoltenVK's Apple GPU, lavapipe) and the extension was
    // enabled; 0 otherwise (a discrete GPU would read imported weights across the bus).
    uint64_t host_import_alignment;
};

class device {
public:
    // Opens the loader, picks a physical device and builds every pipeline; an error says why not.
    static result<std::unique_ptr<device>> create(const device_options & options = {});
    // The Vulkan 1.2 devices with a compute queue, in the loader's order, from an instance made for
    // the purpose and destroyed (no device is created); an error where the loader or instance is not.
    static result<std::vector<device_summary>> list();
    ~device();
    device(const device &) = delete;
    device & operator=(const device &) = delete;

    const device_caps & caps() const { return caps_; }
    bool uses_subgroup() const { return uses_subgroup_; }
    bool uses_integer_dot() const { return uses_integer_dot_; }

    // Validation messages (warnings and errors) seen so far, and the last one's text.
    uint64_t validation_messages() const { return validation_messages_; }
    const std::string & last_validation_message() const { return last_validation_message_; }

    VkDevice handle() const { return device_; }
    VkPhysicalDevice physical() const { return physical_; }
    VkQueue queue() const { return queue_; }
    VkCommandPool command_pool() const { return command_pool_; }
    const pipeline_set & pipelines() const { return *pipelines_; }

    // The index of a memory type in `type_bits` with all of `want`; -1 if none.
    int32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags want) const;

    // Records commands into a one-time command buffer, submits it and waits for it.
    template <class Record>
    status run_once(Record && record) const;
    status submit_and_wait(VkCommandBuffer cb) const;
    result<VkCommandBuffer> begin_one_time() const;

private:
    device() = default;
    status init(const device_options & options);
    static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                         VkDebugUtilsMessageTypeFlagsEXT types,
                                                         const VkDebugUtilsMessengerCallbackDataEXT * data,
                                                         void * self);

    VkInstance instance_ = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    uint32_t queue_family_ = 0;
    VkCommandPool command_pool_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    VkPhysicalDeviceMemoryProperties memory_{};
    device_caps caps_{};
    bool uses_subgroup_ = false;
    bool uses_integer_dot_ = false;
    std::unique_ptr<pipeline_set> pipelines_;
    uint64_t validation_messages_ = 0;
    std::string last_validation_message_;
};

// A Vulkan call's result as a status: "what: VK_ERROR_..." on failure.
status vk_check(VkResult r, const char * what);

template <class Record>
status device::run_once(Record && record) const {
    auto cb = begin_one_time();
    if (!cb) return cb.error();
    record(*cb);
    return submit_and_wait(*cb);
}

}  // namespace hearth::kernels::vulkan
