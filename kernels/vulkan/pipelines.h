// The compute pipelines of the embedded shaders, one per operation and weight type, built once
// for a device. Every shader binds only storage buffers (0..n_buffers-1, in set 0) and takes one
// push-constant block (push_constants.h). For an operation with a subgroup variant the set holds
// the variant the device uses (device::uses_subgroup()), and for the products on quantized
// activations the integer-dot one where the device uses it (device::uses_integer_dot()), under
// the operation's plain name.
// Thread-safety: immutable after create().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "kernels/vulkan/vk.h"

namespace hearth::kernels::vulkan {

class device;

struct pipeline {
    VkPipeline handle = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    uint32_t n_buffers = 0;
    uint32_t push_bytes = 0;
};

class pipeline_set {
public:
    static result<std::unique_ptr<pipeline_set>> create(const device & dev);
    ~pipeline_set();
    pipeline_set(const pipeline_set &) = delete;
    pipeline_set & operator=(const pipeline_set &) = delete;

    // The pipeline of an operation ("matmul_q4_k", "rms_norm", ...); it must exist.
    const pipeline & get(std::string_view op) const;
    size_t size() const { return pipelines_.size(); }

private:
    explicit pipeline_set(VkDevice d) : device_(d) {}
    VkDevice device_;
    std::map<std::string, pipeline, std::less<>> pipelines_;
};

}  // namespace hearth::kernels::vulkan
