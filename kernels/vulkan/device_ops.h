// The Vulkan backend behind kernels/device_ops.h: a device (device.h), one stream the operations
// are recorded into (run by finish()), and the operations of ops.h over its buffers.
// Thread-safety: as device_ops (one owner).
#pragma once

#include <memory>

#include "kernels/device_ops.h"
#include "kernels/vulkan/device.h"

namespace hearth::kernels::vulkan {

// Opens the device (device::create) and its stream; the error says why not ("no Vulkan device: ...").
result<std::unique_ptr<device_ops>> make_device_ops(const device_options & options = {});

}  // namespace hearth::kernels::vulkan
