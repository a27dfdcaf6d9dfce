#include "kernels/vulkan/buffer.h"

#include <cassert>
#include <cstring>
#include <utility>

#include "kernels/vulkan/device.h"

namespace hearth::kernels::vulkan {
namespace {

constexpr VkBufferUsageFlags k_storage_usage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
constexpr VkMemoryPropertyFlags k_host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

}  // namespace

result<buffer> buffer::allocate(const device & dev, size_t bytes, VkBufferUsageFlags usage, bool host_only) {
    assert(bytes > 0);
    buffer b;
    b.device_ = &dev;
    b.size_ = bytes;
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    // Shaders read bytes as 32-bit words: a buffer of 210 bytes (one q6_K block) must hold all
    // of its 53rd word, or that word reads as 0 (robust access) and the block's scale with it.
    bci.size = (bytes + 15) / 16 * 16;
    bci.usage = usage;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (status s = vk_check(vkCreateBuffer(dev.handle(), &bci, nullptr, &b.buffer_), "vkCreateBuffer"); !s)
        return s.error();
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev.handle(), b.buffer_, &req);
    // Preferred: device-local and mappable; then device-local (staged); then host memory.
    int32_t type = -1;
    bool host_visible = true;
    if (!host_only) {
        type = dev.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | k_host);
        if (type < 0) {
            type = dev.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
            host_visible = false;
        }
    }
    if (type < 0) {
        type = dev.memory_type(req.memoryTypeBits, k_host);
        host_visible = true;
    }
    if (type < 0) return fail("no memory type for a buffer of ", bytes, " bytes");
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = static_cast<uint32_t>(type);
    if (status s = vk_check(vkAllocateMemory(dev.handle(), &mai, nullptr, &b.memory_), "vkAllocateMemory"); !s)
        return fail(s.message(), " (", bytes, " bytes)");
    if (status s = vk_check(vkBindBufferMemory(dev.handle(), b.buffer_, b.memory_, 0), "vkBindBufferMemory"); !s)
        return s.error();
    if (host_visible)
        if (status s = vk_check(vkMapMemory(dev.handle(), b.memory_, 0, VK_WHOLE_SIZE, 0, &b.mapped_), "vkMapMemory"); !s)
            return s.error();
    return b;
}

result<buffer> buffer::create(const device & dev, size_t bytes) {
    return allocate(dev, bytes, k_storage_usage, /*host_only=*/false);
}

result<buffer> buffer::import_host(const device & dev, const void * data, size_t bytes) {
    assert(bytes > 0);
    const uint64_t align = dev.caps().host_import_alignment;
    if (align == 0) return fail("the device imports no host memory");
    constexpr VkExternalMemoryHandleTypeFlagBits k_handle = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    const auto addr = reinterpret_cast<uintptr_t>(data);
    const uintptr_t first = addr / align * align;
    const size_t words = (bytes + 15) / 16 * 16;   // as allocate: whole 16-byte words in the buffer
    const size_t span = (addr - first + words + align - 1) / align * align;
    void * base = reinterpret_cast<void *>(first);

    buffer b;
    b.device_ = &dev;
    b.size_ = bytes;
    b.imported_ = true;
    VkExternalMemoryBufferCreateInfo ext{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    ext.handleTypes = k_handle;
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.pNext = &ext;
    bci.size = words;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (status s = vk_check(vkCreateBuffer(dev.handle(), &bci, nullptr, &b.buffer_), "vkCreateBuffer"); !s)
        return s.error();
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev.handle(), b.buffer_, &req);
    if ((addr - first) % req.alignment != 0)
        return fail("host memory at offset ", addr - first, " of its page is not aligned to ", req.alignment);
    VkMemoryHostPointerPropertiesEXT host{VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
    if (status s = vk_check(vkGetMemoryHostPointerPropertiesEXT(dev.handle(), k_handle, base, &host),
                            "vkGetMemoryHostPointerPropertiesEXT");
        !s)
        return s.error();
    const int32_t type = dev.memory_type(req.memoryTypeBits & host.memoryTypeBits, 0);
    if (type < 0) return fail("no memory type imports this host memory");
    VkImportMemoryHostPointerInfoEXT import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT};
    import.handleType = k_handle;
    import.pHostPointer = base;
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.pNext = &import;
    mai.allocationSize = span;
    mai.memoryTypeIndex = static_cast<uint32_t>(type);
    if (status s = vk_check(vkAllocateMemory(dev.handle(), &mai, nullptr, &b.memory_), "vkAllocateMemory (import)"); !s)
        return fail(s.message(), " (", bytes, " bytes)");
    if (status s = vk_check(vkBindBufferMemory(dev.handle(), b.buffer_, b.memory_, addr - first), "vkBindBufferMemory");
        !s)
        return s.error();
    b.mapped_ = const_cast<void *>(data);   // download reads it where it is; upload refuses
    return b;
}

buffer::buffer(buffer && other) noexcept { *this = std::move(other); }

buffer & buffer::operator=(buffer && other) noexcept {
    if (this != &other) {
        release();
        device_ = std::exchange(other.device_, nullptr);
        buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
        memory_ = std::exchange(other.memory_, VK_NULL_HANDLE);
        mapped_ = std::exchange(other.mapped_, nullptr);
        size_ = std::exchange(other.size_, 0);
        imported_ = std::exchange(other.imported_, false);
    }
    return *this;
}

buffer::~buffer() { release(); }

void buffer::release() {
    if (!device_) return;
    if (buffer_) vkDestroyBuffer(device_->handle(), buffer_, nullptr);
    if (memory_) vkFreeMemory(device_->handle(), memory_, nullptr);   // unmaps too (an import: releases it)
    device_ = nullptr;
}

status buffer::upload(const void * src, size_t bytes, size_t offset) {
    assert(offset + bytes <= size_);
    assert(!imported_);   // the host's memory, read-only (a mapped file)
    if (bytes == 0) return {};
    if (mapped_) {
        std::memcpy(static_cast<std::byte *>(mapped_) + offset, src, bytes);
        return {};
    }
    auto staging = allocate(*device_, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, /*host_only=*/true);
    if (!staging) return staging.error();
    std::memcpy(staging->mapped_, src, bytes);
    return device_->run_once([&](VkCommandBuffer cb) {
        const VkBufferCopy region{0, offset, bytes};
        vkCmdCopyBuffer(cb, staging->buffer_, buffer_, 1, &region);
    });
}

status buffer::download(void * dst, size_t bytes, size_t offset) const {
    assert(offset + bytes <= size_);
    if (bytes == 0) return {};
    if (mapped_) {
        std::memcpy(dst, static_cast<const std::byte *>(mapped_) + offset, bytes);
        return {};
    }
    auto staging = allocate(*device_, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, /*host_only=*/true);
    if (!staging) return staging.error();
    if (status s = device_->run_once([&](VkCommandBuffer cb) {
            const VkBufferCopy region{offset, 0, bytes};
            vkCmdCopyBuffer(cb, buffer_, staging->buffer_, 1, &region);
        });
        !s)
        return s;
    std::memcpy(dst, staging->mapped_, bytes);
    return {};
}

status buffer::copy_from(const buffer & src, size_t src_offset, size_t offset, size_t bytes) {
    assert(src_offset + bytes <= src.size_ && offset + bytes <= size_);
    assert(!imported_);
    if (bytes == 0) return {};
    return device_->run_once([&](VkCommandBuffer cb) {
        const VkBufferCopy region{src_offset, offset, bytes};
        vkCmdCopyBuffer(cb, src.buffer_, buffer_, 1, &region);
    });
}

}  // namespace hearth::kernels::vulkan
