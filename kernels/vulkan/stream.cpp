#include "kernels/vulkan/stream.h"

#include <cassert>
#include <utility>

#include "kernels/vulkan/buffer.h"
#include "kernels/vulkan/device.h"
#include "kernels/vulkan/pipelines.h"

namespace hearth::kernels::vulkan {
namespace {

constexpr uint32_t k_sets_per_pool = 256;
constexpr uint32_t k_max_bindings = 8;   // the most buffers any shader binds

}  // namespace

result<stream> stream::create(const device & dev) {
    stream s(dev);
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = dev.command_pool();
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    if (status r = vk_check(vkAllocateCommandBuffers(dev.handle(), &ai, &s.cb_), "vkAllocateCommandBuffers"); !r)
        return r.error();
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (status r = vk_check(vkCreateFence(dev.handle(), &fci, nullptr, &s.fence_), "vkCreateFence"); !r)
        return r.error();
    if (dev.caps().timestamp_period_ns > 0) {
        VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qci.queryCount = 2;
        if (status r = vk_check(vkCreateQueryPool(dev.handle(), &qci, nullptr, &s.timestamps_), "vkCreateQueryPool"); !r)
            return r.error();
    }
    return s;
}

stream::stream(stream && o) noexcept
    : device_(o.device_), cb_(std::exchange(o.cb_, VK_NULL_HANDLE)), fence_(std::exchange(o.fence_, VK_NULL_HANDLE)),
      timestamps_(std::exchange(o.timestamps_, VK_NULL_HANDLE)), pools_(std::move(o.pools_)),
      sets_in_last_pool_(o.sets_in_last_pool_), recording_(o.recording_), n_dispatches_(o.n_dispatches_),
      last_device_us_(o.last_device_us_) {
    o.pools_.clear();
    o.recording_ = false;
}

stream::~stream() {
    const VkDevice d = device_->handle();
    if (recording_) vkEndCommandBuffer(cb_);
    for (VkDescriptorPool p : pools_) vkDestroyDescriptorPool(d, p, nullptr);
    if (timestamps_) vkDestroyQueryPool(d, timestamps_, nullptr);
    if (fence_) vkDestroyFence(d, fence_, nullptr);
    if (cb_) vkFreeCommandBuffers(d, device_->command_pool(), 1, &cb_);
}

status stream::begin() {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (status s = vk_check(vkBeginCommandBuffer(cb_, &bi), "vkBeginCommandBuffer"); !s) return s;
    if (timestamps_) {
        vkCmdResetQueryPool(cb_, timestamps_, 0, 2);
        vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps_, 0);
    }
    recording_ = true;
    n_dispatches_ = 0;
    return {};
}

VkDescriptorSet stream::allocate_set(VkDescriptorSetLayout layout) {
    if (pools_.empty() || sets_in_last_pool_ == k_sets_per_pool) {
        const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, k_sets_per_pool * k_max_bindings};
        VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        pci.maxSets = k_sets_per_pool;
        pci.poolSizeCount = 1;
        pci.pPoolSizes = &size;
        VkDescriptorPool pool = VK_NULL_HANDLE;
        const VkResult r = vkCreateDescriptorPool(device_->handle(), &pci, nullptr, &pool);
        assert(r == VK_SUCCESS);
        (void)r;
        pools_.push_back(pool);
        sets_in_last_pool_ = 0;
    }
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pools_.back();
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    const VkResult r = vkAllocateDescriptorSets(device_->handle(), &ai, &set);
    assert(r == VK_SUCCESS);
    (void)r;
    ++sets_in_last_pool_;
    return set;
}

void stream::dispatch(const pipeline & p, std::initializer_list<const buffer *> buffers, const void * push,
                      uint32_t groups_x, uint32_t groups_y, uint32_t groups_z) {
    assert(buffers.size() == p.n_buffers && buffers.size() <= k_max_bindings);
    if (!recording_) {
        const status s = begin();
        assert(s);
        (void)s;
    }
    const VkDescriptorSet set = allocate_set(p.set_layout);
    VkDescriptorBufferInfo infos[k_max_bindings];
    VkWriteDescriptorSet writes[k_max_bindings];
    uint32_t i = 0;
    for (const buffer * b : buffers) {
        infos[i] = {b->handle(), 0, VK_WHOLE_SIZE};
        writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstSet = set;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
        ++i;
    }
    vkUpdateDescriptorSets(device_->handle(), i, writes, 0, nullptr);

    if (n_dispatches_ > 0) {   // this dispatch reads what the ones before it wrote
        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb,
                             0, nullptr, 0, nullptr);
    }
    vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, p.handle);
    vkCmdBindDescriptorSets(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
    vkCmdPushConstants(cb_, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p.push_bytes, push);
    vkCmdDispatch(cb_, groups_x, groups_y, groups_z);
    ++n_dispatches_;
}

status stream::finish() {
    if (!recording_) return {};
    if (timestamps_) vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps_, 1);
    // Results written by the shaders become visible to the host once the fence signals
    // (the queue-submit/fence ordering plus a host-read barrier).
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                         nullptr);
    recording_ = false;
    if (status s = vk_check(vkEndCommandBuffer(cb_), "vkEndCommandBuffer"); !s) return s;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb_;
    status s = vk_check(vkQueueSubmit(device_->queue(), 1, &si, fence_), "vkQueueSubmit");
    if (s) s = vk_check(vkWaitForFences(device_->handle(), 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    vkResetFences(device_->handle(), 1, &fence_);
    if (s && timestamps_) {
        uint64_t ts[2] = {};
        if (vkGetQueryPoolResults(device_->handle(), timestamps_, 0, 2, sizeof ts, ts, sizeof ts[0],
                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS)
            last_device_us_ = static_cast<double>(ts[1] - ts[0]) * device_->caps().timestamp_period_ns / 1000.0;
    }
    for (VkDescriptorPool p : pools_) vkResetDescriptorPool(device_->handle(), p, 0);
    sets_in_last_pool_ = 0;
    // Keep only the first pool filled next time: the sets of all pools were freed together.
    while (pools_.size() > 1) {
        vkDestroyDescriptorPool(device_->handle(), pools_.back(), nullptr);
        pools_.pop_back();
    }
    vkResetCommandBuffer(cb_, 0);
    return s;
}

}  // namespace hearth::kernels::vulkan
