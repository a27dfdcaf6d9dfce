// The devices the Vulkan tests run on: every operation runs twice where the device has subgroup
// arithmetic (the subgroup shaders and the shared-memory ones), once otherwise, always with the
// validation layer on; the products on quantized activations also with and without the device's
// integer dot products where it has them (product_devices()). Without a Vulkan device each test is
// skipped with the reason (tests/skip.h).
#pragma once

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/fp16.h"
#include "kernels/vulkan/buffer.h"
#include "kernels/vulkan/device.h"
#include "kernels/vulkan/stream.h"
#include "tests/skip.h"

namespace hearth::kernels::vulkan::test {

struct test_device {
    std::string label;   // "subgroup" or "plain", then ", integer dot" or ", scalar dot" where the device has one
    std::unique_ptr<device> dev;
};

struct test_device_lists {
    std::vector<test_device> main;         // as the engine opens them: integer dot products where the device has them
    std::vector<test_device> scalar_dot;   // the same with allow_integer_dot = false, where that differs
    std::string reason;                    // why there are none
};

// Created once per process; empty (with the reason) where there is no device.
inline test_device_lists & test_device_lists_once() {
    static test_device_lists lists = [] {
        test_device_lists out;
        for (const bool subgroup : {true, false}) {
            auto d = device::create({.validation = true, .allow_subgroup = subgroup});
            if (!d) {
                out.reason = d.message();
                break;
            }
            const bool uses = (*d)->uses_subgroup();
            if (subgroup && !uses) continue;
            const std::string base = uses ? "subgroup" : "plain";
            if (!(*d)->uses_integer_dot()) {
                out.main.push_back({base, std::move(*d)});
                continue;
            }
            out.main.push_back({base + ", integer dot", std::move(*d)});
            auto scalar = device::create({.validation = true, .allow_subgroup = subgroup, .allow_integer_dot = false});
            if (!scalar) {
                out.reason = scalar.message();
                out.main.clear();
                out.scalar_dot.clear();
                break;
            }
            out.scalar_dot.push_back({base + ", scalar dot", std::move(*scalar)});
        }
        return out;
    }();
    return lists;
}

// The devices most tests run on (both reductions where the device has subgroup arithmetic).
inline std::vector<test_device> & test_devices(std::string * why = nullptr) {
    auto & lists = test_device_lists_once();
    if (why) *why = lists.reason;
    return lists.main;
}

// For the products on quantized activations: test_devices() and, where the device has integer
// dot products, the same devices without them (the scalar sums, which must give the same bits).
inline std::vector<test_device *> product_devices() {
    std::vector<test_device *> out;
    for (auto & td : test_device_lists_once().main) out.push_back(&td);
    for (auto & td : test_device_lists_once().scalar_dot) out.push_back(&td);
    return out;
}

// True where the tests can run; otherwise the case is recorded as skipped, with the reason.
inline bool have_device() {
    std::string why;
    if (!test_devices(&why).empty()) return true;
    ::hearth::test::skip("no Vulkan device: " + why);
    return false;
}

template <class T>
buffer upload(const device & d, const std::vector<T> & v) {
    auto b = buffer::create(d, std::max<size_t>(v.size() * sizeof(T), 4));
    INFO((b ? std::string() : b.message()));
    REQUIRE(b.has_value());
    if (!v.empty()) REQUIRE(b->upload(v.data(), v.size() * sizeof(T)).has_value());
    return std::move(*b);
}

inline buffer zeros(const device & d, size_t bytes) {
    std::vector<uint8_t> z(bytes, 0);
    return upload(d, z);
}

template <class T>
std::vector<T> download(const buffer & b, size_t n) {
    std::vector<T> v(n);
    REQUIRE(b.download(v.data(), n * sizeof(T)).has_value());
    return v;
}

inline stream new_stream(const device & d) {
    auto s = stream::create(d);
    REQUIRE(s.has_value());
    return std::move(*s);
}

inline void run(stream & s) {
    const status st = s.finish();
    INFO((st ? std::string() : st.message()));
    REQUIRE(st.has_value());
}

inline void require_validation_silent(const test_device & td) {
    INFO("last validation message: " << td.dev->last_validation_message());
    REQUIRE(td.dev->validation_messages() == 0);
}

// The largest difference measured per operation, printed for docs/gpu.md (run the test binary
// to see them): "vulkan max diff <op> <variant>: <diff> (tolerance <tol>)".
inline void report(const std::string & op, const test_device & td, double max_diff, const std::string & tol) {
    std::printf("vulkan max diff %s %s: %.3g (tolerance %s)\n", op.c_str(), td.label.c_str(), max_diff, tol.c_str());
}

}  // namespace hearth::kernels::vulkan::test
