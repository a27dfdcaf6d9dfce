// The CUDA device the kernel tests share, and buffers to and from it. Without a device (no
// driver, none present) test_device() records a skip with the reason (tests/skip.h) and returns
// nullptr; where scripts/gpu-check set HEARTH_CUDA_PRESENT=1 a missing device fails instead.
// Thread-safety: the test thread only.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/device.h"
#include "tests/skip.h"

namespace hearth::kernels::cuda::test {

inline bool present() {
    const char * p = std::getenv("HEARTH_CUDA_PRESENT");
    return p && std::string(p) == "1";
}

// The process's device, or nullptr with the reason given once.
inline device * test_device() {
    static std::string why;
    static std::unique_ptr<device> dev = [] {
        auto d = device::create();
        if (!d) {
            why = d.message();
            return std::unique_ptr<device>();
        }
        std::printf("cuda test device: %s (sm_%d%d)\n", (*d)->info().name.c_str(), (*d)->info().cc_major,
                    (*d)->info().cc_minor);
        return std::move(*d);
    }();
    if (!dev && present()) FAIL("HEARTH_CUDA_PRESENT=1 but no CUDA device: " << why);
    if (!dev) ::hearth::test::skip("no CUDA device here: " + why);
    return dev.get();
}

template <class T>
buffer upload(device & d, const std::vector<T> & v) {
    auto b = buffer::create(d, std::max<size_t>(v.size() * sizeof(T), 4));
    REQUIRE(b.has_value());
    REQUIRE(b->upload(v.data(), v.size() * sizeof(T)).has_value());
    return std::move(*b);
}

inline buffer zeros(device & d, size_t bytes) { return upload(d, std::vector<uint8_t>(std::max<size_t>(bytes, 4), 0)); }

// Waits for the queued work (its error fails the test), then n values of b.
template <class T>
std::vector<T> download(device & d, const buffer & b, size_t n) {
    REQUIRE(d.finish().has_value());
    std::vector<T> out(n);
    REQUIRE(b.download(out.data(), n * sizeof(T)).has_value());
    return out;
}

}  // namespace hearth::kernels::cuda::test
