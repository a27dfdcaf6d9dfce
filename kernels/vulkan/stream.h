// A sequence of compute dispatches recorded into one command buffer and run by finish(): each
// dispatch binds its pipeline, a descriptor set of whole storage buffers and its push constants,
// and waits for the dispatches before it (a full compute-to-compute memory barrier: simple and
// always correct; finer barriers are a later optimisation). Where the queue has timestamps,
// finish() measures the device time between the first and the last dispatch.
// Invariants: buffers bound to a dispatch stay alive until finish() returns.
// Thread-safety: one owner; one stream runs on a device's queue at a time.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "base/result.h"
#include "kernels/vulkan/vk.h"

namespace hearth::kernels::vulkan {

class buffer;
class device;
struct pipeline;

class stream {
public:
    static result<stream> create(const device & dev);
    stream(stream && other) noexcept;
    stream & operator=(stream &&) = delete;
    ~stream();

    const device & dev() const { return *device_; }

    // Records one dispatch of groups_x * groups_y * groups_z workgroups.
    void dispatch(const pipeline & p, std::initializer_list<const buffer *> buffers, const void * push,
                  uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1);

    // Runs everything recorded since the last finish() and waits for it.
    status finish();

    uint32_t dispatches() const { return n_dispatches_; }
    // Device time of the last finish() in microseconds; negative where the queue has no timestamps.
    double last_device_us() const { return last_device_us_; }

private:
    explicit stream(const device & dev) : device_(&dev) {}
    status begin();
    VkDescriptorSet allocate_set(VkDescriptorSetLayout layout);

    const device * device_;
    VkCommandBuffer cb_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    VkQueryPool timestamps_ = VK_NULL_HANDLE;
    std::vector<VkDescriptorPool> pools_;   // the last is the one being filled
    uint32_t sets_in_last_pool_ = 0;
    bool recording_ = false;
    uint32_t n_dispatches_ = 0;
    double last_device_us_ = -1.0;
};

}  // namespace hearth::kernels::vulkan
