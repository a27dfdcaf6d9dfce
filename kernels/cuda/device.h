// The CUDA device layer: one device (HEARTH_CUDA_DEVICE=N picks it, 0 otherwise), one stream the
// operations are queued on, device memory. No CUDA header is included here: the rest of hearth
// is plain C++ and only kernels/cuda/*.cu see the runtime. Errors carry the runtime's own text
// and number ("CUDA driver version is insufficient for CUDA runtime version (error 35)").
// Thread-safety: a device and its buffers have one owner (the engine's compute worker).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "kernels/device_ops.h"

namespace hearth::kernels::cuda {

struct device_info {
    int ordinal = 0;
    std::string name;             // "NVIDIA H200"
    int cc_major = 0, cc_minor = 0;
    uint64_t total_bytes = 0;     // device memory
    uint64_t free_bytes = 0;      // free when the device was opened
};

class device {
public:
    static result<std::unique_ptr<device>> create();
    // Every device the driver reports (none opened); an error where the driver is absent.
    static result<std::vector<device_summary>> list();
    ~device();
    device(const device &) = delete;
    device & operator=(const device &) = delete;

    const device_info & info() const { return info_; }
    // The cudaStream_t the operations are queued on.
    void * stream() const { return stream_; }
    // Waits for everything queued; the first error of a launch or a copy, with the runtime's text,
    // or of a scratch allocation.
    status finish();

    // Device memory of at least `bytes` that an operation uses between its kernels (the q8_K form
    // of a product's activations), owned by the device and reused by the next operation. Growing
    // it first waits for the queued work that may still read the old one. nullptr where it cannot
    // be allocated: the operation then queues nothing and finish() returns the error.
    void * scratch(size_t bytes);

private:
    device() = default;
    device_info info_;
    void * stream_ = nullptr;
    void * scratch_ = nullptr;
    size_t scratch_bytes_ = 0;
    std::string scratch_error_;   // the failed allocation finish() reports
};

// Device memory of a fixed size. Copies are queued on the device's stream: upload returns once
// the host memory may be reused, download once the bytes are in host memory.
class buffer {
public:
    static result<buffer> create(device & d, size_t bytes);
    buffer(buffer && o) noexcept;
    buffer & operator=(buffer && o) noexcept;
    ~buffer();

    status upload(const void * src, size_t bytes, size_t offset = 0);
    status download(void * dst, size_t bytes, size_t offset = 0) const;
    // bytes of src at src_offset to this buffer at offset, on the device, waited for.
    status copy_from(const buffer & src, size_t src_offset, size_t offset, size_t bytes);
    void * data() const { return data_; }
    size_t size() const { return size_; }
    device & dev() const { return *dev_; }

private:
    buffer(device & d, void * p, size_t n) : dev_(&d), data_(p), size_(n) {}
    device * dev_ = nullptr;
    void * data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace hearth::kernels::cuda
