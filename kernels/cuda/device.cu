#include "kernels/cuda/device.h"

#include <cstdlib>
#include <string>
#include <utility>

#include "kernels/cuda/check.h"

namespace hearth::kernels::cuda {

result<std::vector<device_summary>> device::list() {
    int count = 0;
    if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) return cuda_error("no CUDA device", e);
    std::vector<device_summary> out;
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaError_t e = cudaGetDeviceProperties(&prop, i); e != cudaSuccess)
            return cuda_error("reading the CUDA device's properties", e);
        out.push_back({prop.name, false, static_cast<uint64_t>(prop.totalGlobalMem)});
    }
    return out;
}

result<std::unique_ptr<device>> device::create() {
    int count = 0;
    // The first call also loads the driver: no driver or an older one than the runtime fails here.
    if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) return cuda_error("no CUDA device", e);
    if (count == 0) return fail("no CUDA device: the driver reports none");
    int ordinal = 0;
    if (const char * want = std::getenv("HEARTH_CUDA_DEVICE"); want && *want) {
        char * end = nullptr;
        const long n = std::strtol(want, &end, 10);
        if (*end != '\0' || n < 0 || n >= count)
            return fail("HEARTH_CUDA_DEVICE='", want, "': expected a device number below ", count);
        ordinal = static_cast<int>(n);
    }
    if (cudaError_t e = cudaSetDevice(ordinal); e != cudaSuccess) return cuda_error("opening the CUDA device", e);
    cudaDeviceProp prop{};
    if (cudaError_t e = cudaGetDeviceProperties(&prop, ordinal); e != cudaSuccess)
        return cuda_error("reading the CUDA device's properties", e);
    if (prop.major < 7 || (prop.major == 7 && prop.minor < 5))
        return fail("the CUDA device ", prop.name, " is sm_", prop.major, prop.minor,
                    "; this build needs sm_75 (Turing) or newer");
    std::unique_ptr<device> d(new device());
    d->info_.ordinal = ordinal;
    d->info_.name = prop.name;
    d->info_.cc_major = prop.major;
    d->info_.cc_minor = prop.minor;
    size_t free_b = 0, total_b = 0;
    if (cudaError_t e = cudaMemGetInfo(&free_b, &total_b); e != cudaSuccess)
        return cuda_error("reading the CUDA device's memory", e);
    d->info_.total_bytes = total_b;
    d->info_.free_bytes = free_b;
    cudaStream_t s = nullptr;
    if (cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); e != cudaSuccess)
        return cuda_error("creating a CUDA stream", e);
    d->stream_ = s;
    return d;
}

device::~device() {
    if (scratch_) cudaFree(scratch_);
    if (stream_) cudaStreamDestroy(as_stream(stream_));
}

void * device::scratch(size_t bytes) {
    if (bytes <= scratch_bytes_) return scratch_;
    // Kernels queued before may still read the old scratch: free it only once they are done.
    if (cudaError_t e = cudaStreamSynchronize(as_stream(stream_)); e != cudaSuccess) {
        if (scratch_error_.empty()) scratch_error_ = cuda_error("growing the CUDA scratch", e).message;
        return nullptr;
    }
    if (scratch_) cudaFree(scratch_);
    scratch_ = nullptr;
    scratch_bytes_ = 0;
    const size_t want = bytes + bytes / 4;   // some room, so a slightly longer batch does not grow it again
    if (cudaError_t e = cudaMalloc(&scratch_, want); e != cudaSuccess) {
        cudaGetLastError();   // not sticky: the next launch's check should not see it
        scratch_ = nullptr;
        if (scratch_error_.empty())
            scratch_error_ = cuda_error(("allocating " + std::to_string(want) + " bytes of CUDA scratch").c_str(), e).message;
        return nullptr;
    }
    scratch_bytes_ = want;
    return scratch_;
}

status device::finish() {
    if (!scratch_error_.empty()) {
        const std::string why = std::exchange(scratch_error_, {});
        cudaStreamSynchronize(as_stream(stream_));
        return fail(why);
    }
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_error("launching a CUDA kernel", e);
    if (cudaError_t e = cudaStreamSynchronize(as_stream(stream_)); e != cudaSuccess)
        return cuda_error("running the CUDA kernels", e);
    return {};
}

result<buffer> buffer::create(device & d, size_t bytes) {
    void * p = nullptr;
    if (cudaError_t e = cudaMalloc(&p, bytes); e != cudaSuccess) {
        cudaGetLastError();   // an allocation failure is not sticky: clear it for the next launch's check
        return cuda_error("allocating CUDA device memory", e);
    }
    return buffer(d, p, bytes);
}

buffer::buffer(buffer && o) noexcept
    : dev_(o.dev_), data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

buffer & buffer::operator=(buffer && o) noexcept {
    if (this != &o) {
        if (data_) cudaFree(data_);
        dev_ = o.dev_;
        data_ = std::exchange(o.data_, nullptr);
        size_ = std::exchange(o.size_, 0);
    }
    return *this;
}

buffer::~buffer() {
    if (data_) cudaFree(data_);
}

status buffer::upload(const void * src, size_t bytes, size_t offset) {
    if (offset + bytes > size_) return fail("CUDA upload of ", bytes, " bytes at ", offset, " past a buffer of ", size_);
    if (bytes == 0) return {};
    if (cudaError_t e = cudaMemcpyAsync(static_cast<char *>(data_) + offset, src, bytes, cudaMemcpyHostToDevice,
                                        as_stream(dev_->stream()));
        e != cudaSuccess)
        return cuda_error("copying to the CUDA device", e);
    // Pageable host memory may be reused once the copy is queued only after it completed.
    if (cudaError_t e = cudaStreamSynchronize(as_stream(dev_->stream())); e != cudaSuccess)
        return cuda_error("copying to the CUDA device", e);
    return {};
}

status buffer::download(void * dst, size_t bytes, size_t offset) const {
    if (offset + bytes > size_) return fail("CUDA download of ", bytes, " bytes at ", offset, " past a buffer of ", size_);
    if (bytes == 0) return {};
    if (cudaError_t e = cudaMemcpyAsync(dst, static_cast<const char *>(data_) + offset, bytes, cudaMemcpyDeviceToHost,
                                        as_stream(dev_->stream()));
        e != cudaSuccess)
        return cuda_error("copying from the CUDA device", e);
    if (cudaError_t e = cudaStreamSynchronize(as_stream(dev_->stream())); e != cudaSuccess)
        return cuda_error("copying from the CUDA device", e);
    return {};
}

status buffer::copy_from(const buffer & src, size_t src_offset, size_t offset, size_t bytes) {
    if (src_offset + bytes > src.size_ || offset + bytes > size_)
        return fail("CUDA copy of ", bytes, " bytes from ", src_offset, " to ", offset, " past a buffer of ",
                    src.size_, " or ", size_);
    if (bytes == 0) return {};
    if (cudaError_t e = cudaMemcpyAsync(static_cast<char *>(data_) + offset, static_cast<const char *>(src.data_) + src_offset,
                                        bytes, cudaMemcpyDeviceToDevice, as_stream(dev_->stream()));
        e != cudaSuccess)
        return cuda_error("copying on the CUDA device", e);
    if (cudaError_t e = cudaStreamSynchronize(as_stream(dev_->stream())); e != cudaSuccess)
        return cuda_error("copying on the CUDA device", e);
    return {};
}

}  // namespace hearth::kernels::cuda
