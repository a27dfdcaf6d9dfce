// The Vulkan backend behind kernels/device_ops.h: a device (device.h), one stream the operations
// are recorded into (run by finish()), and the operations of ops.h over its buffers. The K-quant
// products quantize their f32 input to q8_K themselves, into a scratch buffer of the backend's
// (the interface's activation form is q8_0 only). HEARTH_VULKAN_INTEGER_DOT=0 in the environment
// turns the device's integer dot products off (device_options::allow_integer_dot).
// Thread-safety: as device_ops (one owner).
#pragma once

#include <memory>
#include <vector>

#include "kernels/device_ops.h"
#include "kernels/vulkan/device.h"

namespace hearth::kernels::vulkan {

// Opens the device (device::create) and its stream; the error says why not ("no Vulkan device: ...").
// options.allow_integer_dot is false where HEARTH_VULKAN_INTEGER_DOT is "0".
result<std::unique_ptr<device_ops>> make_device_ops(const device_options & options = {});

// The devices make_device_ops could open (device::list), as `hearth devices` shows them.
result<std::vector<device_summary>> list_devices();

}  // namespace hearth::kernels::vulkan
