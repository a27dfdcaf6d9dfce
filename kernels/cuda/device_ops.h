// The CUDA backend behind kernels/device_ops.h: a device (device.h), its one stream the
// operations are queued on (finish() waits for them), and the operations of ops.h over its
// buffers. Plain C++: no CUDA header is seen here.
// Thread-safety: as device_ops (one owner).
#pragma once

#include <memory>
#include <vector>

#include "kernels/device_ops.h"

namespace hearth::kernels::cuda {

// Opens the device (device::create); the error says why not ("no CUDA device: ...").
result<std::unique_ptr<device_ops>> make_device_ops();

// The devices the driver reports (device::list), as `hearth devices` shows them.
result<std::vector<device_summary>> list_devices();

}  // namespace hearth::kernels::cuda
