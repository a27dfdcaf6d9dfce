// The device layer itself: what the device reports, the embedded pipelines, the no-loader path.
#include <cstdlib>
#include <vector>
#include <string>

#include "kernels/vulkan/loader.h"
#include "kernels/vulkan/ops.h"
#include "kernels/vulkan/pipelines.h"
#include "kernels/vulkan/shaders.h"
#include "tests/kernels/vulkan/vulkan_test_device.h"

namespace kv = hearth::kernels::vulkan;

TEST_CASE("vulkan: every shader is embedded as SPIR-V", "[kernels][vulkan]") {
    REQUIRE(kv::embedded_shaders().size() >= 20);
    for (const auto & s : kv::embedded_shaders()) {
        INFO(s.name);
        REQUIRE(s.words.size() > 5);
        CHECK(s.words[0] == 0x07230203u);   // the SPIR-V magic number
    }
    CHECK(kv::find_shader("matmul_q4_k_subgroup").size() > 0);
    CHECK(kv::find_shader("matmul_q4_k_subgroup_idot").size() > 0);
    CHECK(kv::find_shader("matmul_experts_q8_0_idot").size() > 0);
    CHECK(kv::find_shader("quantize_q8_k").size() > 0);
    CHECK(kv::find_shader("no_such_shader").empty());
}

TEST_CASE("vulkan: the device reports itself and builds every pipeline with validation silent", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    for (auto & td : kv::test::test_devices()) {
        const auto & c = td.dev->caps();
        std::printf("vulkan device (%s): %s, api %u.%u, subgroup %u%s, float16 %d, int8 %d, integer dot %d, "
                    "%llu MiB device-local, timestamps %s\n",
                    td.label.c_str(), c.name.c_str(), VK_API_VERSION_MAJOR(c.api_version),
                    VK_API_VERSION_MINOR(c.api_version), c.subgroup_size,
                    c.subgroup_arithmetic ? " with arithmetic" : "", c.shader_float16, c.shader_int8,
                    c.integer_dot_product, static_cast<unsigned long long>(c.device_local_bytes >> 20),
                    c.timestamp_period_ns > 0 ? "yes" : "no");
        CHECK(!c.name.empty());
        CHECK(td.dev->pipelines().size() == 47);   // every entry of pipelines.cpp k_ops
        CHECK(td.dev->uses_subgroup() == td.label.starts_with("subgroup"));
        CHECK(td.dev->uses_integer_dot() == c.integer_dot_product);   // used where the device has them
        kv::test::require_validation_silent(td);
    }
    for (const auto * td : kv::test::product_devices()) {   // the integer-dot and the scalar products both build
        INFO(td->label);
        CHECK(td->dev->uses_integer_dot() == (td->label.find("integer dot") != std::string::npos));
        kv::test::require_validation_silent(*td);
    }
}

TEST_CASE("vulkan: a stream with nothing recorded finishes at once", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    auto & td = kv::test::test_devices().front();
    auto s = kv::test::new_stream(*td.dev);
    kv::test::run(s);
    CHECK(s.dispatches() == 0);
}

TEST_CASE("vulkan: a stream times its dispatches on the device", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    auto & td = kv::test::test_devices().front();
    if (td.dev->caps().timestamp_period_ns <= 0) {
        WARN("the device's queue has no timestamps");
        return;
    }
    const std::vector<float> x(1 << 20, 0.5f);
    auto a = kv::test::upload(*td.dev, x);
    auto b = kv::test::upload(*td.dev, x);
    auto y = kv::test::zeros(*td.dev, x.size() * sizeof(float));
    auto s = kv::test::new_stream(*td.dev);
    kv::swiglu(s, a, b, y, static_cast<int64_t>(x.size()));
    kv::swiglu(s, y, b, a, static_cast<int64_t>(x.size()));
    CHECK(s.dispatches() == 2);
    kv::test::run(s);
    std::printf("vulkan: two swiglu dispatches of 2^20 elements took %.0f us on the device\n", s.last_device_us());
    CHECK(s.last_device_us() > 0);
    CHECK(s.last_device_us() < 60e6);
    kv::test::require_validation_silent(td);
}

// Run by ctest as kernels_vulkan_no_loader, with HEARTH_VULKAN_LOADER naming a library that does
// not exist: the device is refused with a clear message, and nothing crashes.
TEST_CASE("vulkan: without a loader the device is refused with a clear error", "[.][no_loader]") {
    REQUIRE(std::getenv("HEARTH_EXPECT_NO_VULKAN") != nullptr);
    const auto d = kv::device::create({.validation = false});
    REQUIRE_FALSE(d.has_value());
    INFO(d.message());
    CHECK(d.message().find("no Vulkan loader") != std::string::npos);
    CHECK(d.message().find("/nonexistent/libvulkan.so.1") != std::string::npos);
    CHECK_FALSE(kv::load_vulkan().has_value());   // and it stays refused
}
