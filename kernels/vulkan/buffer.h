// A storage buffer in device memory. Where the device has device-local memory the host can map
// (integrated GPUs, unified memory, lavapipe) the buffer lives there and upload/download are
// memcpy; otherwise it is device-local only and upload/download go through a host-visible
// staging buffer and a copy on the queue.
// An imported buffer (import_host) is the host's own memory, read in place: no copy, no second
// resident set; it is read-only (upload asserts) and the memory must outlive it unchanged.
// Invariants: size() > 0; every offset + bytes passed is within size() (asserted).
// Thread-safety: one owner; upload/download use the device's queue (not while a stream runs).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/result.h"
#include "kernels/vulkan/vk.h"

namespace hearth::kernels::vulkan {

class device;

class buffer {
public:
    static result<buffer> create(const device & dev, size_t bytes);
    // A buffer over host memory [data, data + bytes) (a mapped model file), imported with
    // VK_EXT_external_memory_host: the whole pages around it, the buffer bound at data's offset in
    // them. An error where the device cannot (no extension, an offset the buffer's alignment
    // refuses, the driver's refusal): the caller copies instead.
    static result<buffer> import_host(const device & dev, const void * data, size_t bytes);
    buffer(buffer && other) noexcept;
    buffer & operator=(buffer && other) noexcept;
    ~buffer();

    size_t size() const { return size_; }
    VkBuffer handle() const { return buffer_; }
    bool mapped() const { return mapped_ != nullptr; }
    bool imported() const { return imported_; }

    status upload(const void * src, size_t bytes, size_t offset = 0);
    status download(void * dst, size_t bytes, size_t offset = 0) const;
    // bytes of src at src_offset to this buffer at offset, on the device's queue, waited for.
    status copy_from(const buffer & src, size_t src_offset, size_t offset, size_t bytes);

private:
    buffer() = default;
    void release();
    static result<buffer> allocate(const device & dev, size_t bytes, VkBufferUsageFlags usage, bool host_only);

    const device * device_ = nullptr;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    void * mapped_ = nullptr;
    size_t size_ = 0;
    bool imported_ = false;
};

}  // namespace hearth::kernels::vulkan
