// The CUDA operations against the CPU kernels on random data, held to the tolerances docs/gpu.md
// states for the Vulkan shaders they mirror. Without a CUDA device (no driver, none present) each
// test is skipped with the reason (tests/skip.h); scripts/gpu-check runs them on a GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/device.h"
#include "kernels/cuda/ops.h"
#include "kernels/fp16.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/quant.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/quant_test_util.h"
#include "tests/skip.h"

namespace k = hearth::kernels;
namespace kc = hearth::kernels::cuda;
using k::tensor_type;

namespace {

bool present() {
    const char * p = std::getenv("HEARTH_CUDA_PRESENT");
    return p && std::string(p) == "1";
}

// The process's device, or nullptr with the reason given once.
kc::device * test_device() {
    static std::string why;
    static std::unique_ptr<kc::device> dev = [] {
        auto d = kc::device::create();
        if (!d) {
            why = d.message();
            return std::unique_ptr<kc::device>();
        }
        std::printf("cuda test device: %s (sm_%d%d)\n", (*d)->info().name.c_str(), (*d)->info().cc_major,
                    (*d)->info().cc_minor);
        return std::move(*d);
    }();
    // scripts/gpu-check sets HEARTH_CUDA_PRESENT=1: there a missing device is a failure.
    if (!dev && present()) FAIL("HEARTH_CUDA_PRESENT=1 but no CUDA device: " << why);
    if (!dev) ::hearth::test::skip("no CUDA device here: " + why);
    return dev.get();
}

template <class T>
kc::buffer upload(kc::device & d, const std::vector<T> & v) {
    auto b = kc::buffer::create(d, std::max<size_t>(v.size() * sizeof(T), 4));
    REQUIRE(b.has_value());
    REQUIRE(b->upload(v.data(), v.size() * sizeof(T)).has_value());
    return std::move(*b);
}

kc::buffer zeros(kc::device & d, size_t bytes) { return upload(d, std::vector<uint8_t>(std::max<size_t>(bytes, 4), 0)); }

template <class T>
std::vector<T> download(kc::device & d, const kc::buffer & b, size_t n) {
    REQUIRE(d.finish().has_value());
    std::vector<T> out(n);
    REQUIRE(b.download(out.data(), n * sizeof(T)).has_value());
    return out;
}

double max_rel(const std::vector<float> & got, const std::vector<float> & want) {
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i)
        worst = std::max(worst, std::fabs(double(got[i]) - want[i]) / std::max(1e-6, std::fabs(double(want[i]))));
    return worst;
}

}  // namespace

TEST_CASE("cuda matmul: q8_0, q4_0, f16, f32 against kernels::matmul, 1, 7 and 512 tokens", "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    const int64_t n_tokens = GENERATE(1, 7, 512);
    const int64_t n_rows = GENERATE(1, 67, 130);
    const int64_t n_cols = GENERATE(172, 256, 768);
    k::thread_pool pool(1);
    k::matmul_context ctx;
    for (const tensor_type t : {tensor_type::q8_0, tensor_type::q4_0, tensor_type::f16, tensor_type::f32}) {
        if (n_cols % 32 != 0 && kc::takes_q8_0_activations(t)) continue;
        INFO("type " << k::tensor_type_info(t).name << " tokens " << n_tokens << " rows " << n_rows << " cols " << n_cols);
        const size_t row_bytes = k::row_size(t, n_cols);
        std::vector<uint8_t> m;
        for (int64_t r = 0; r < n_rows; ++r) {
            const auto row = k::test::random_weight_row(t, n_cols, 23 + static_cast<uint32_t>(r));
            m.insert(m.end(), row.begin(), row.end());
        }
        const auto x = k::test::random_floats(n_tokens * n_cols, 5);
        std::vector<float> cpu(static_cast<size_t>(n_tokens * n_rows));
        k::matmul({t, m.data(), n_rows, n_cols, row_bytes}, x.data(), n_tokens, cpu.data(), pool, ctx);

        auto w = upload(*dev, m);
        auto xb = upload(*dev, x);
        auto xq = zeros(*dev, kc::q8_0_activation_bytes(n_tokens, n_cols));
        auto yb = zeros(*dev, cpu.size() * sizeof(float));
        const bool q8 = kc::takes_q8_0_activations(t);
        if (q8) kc::quantize_q8_0(xb, xq, n_tokens, n_cols);
        kc::matmul({&w, t, n_rows, n_cols, row_bytes}, xb, yb, n_tokens, q8 ? &xq : nullptr);
        const auto got = download<float>(*dev, yb, cpu.size());
        // Relative to sum|w x| of the row: the same activations, sums in another order (1e-5).
        std::vector<float> wdeq(static_cast<size_t>(n_rows * n_cols));
        for (int64_t r = 0; r < n_rows; ++r) k::dequantize_row(t, m.data() + r * row_bytes, wdeq.data() + r * n_cols, n_cols);
        double worst = 0;
        for (int64_t tk = 0; tk < n_tokens; ++tk)
            for (int64_t r = 0; r < n_rows; ++r) {
                double abs_sum = 0;
                for (int64_t c = 0; c < n_cols; ++c) abs_sum += std::fabs(double(wdeq[r * n_cols + c]) * x[tk * n_cols + c]);
                const double d = std::fabs(double(got[tk * n_rows + r]) - cpu[tk * n_rows + r]) / (abs_sum + 1e-30);
                worst = std::max(worst, d);
            }
        std::printf("cuda matmul %s tokens %lld rows %lld cols %lld: max difference %.3g (relative to sum|w x|)\n",
                    std::string(k::tensor_type_info(t).name).c_str(), (long long)n_tokens, (long long)n_rows,
                    (long long)n_cols, worst);
        CHECK(worst < 1e-5);
    }
}

TEST_CASE("cuda rms_norm, swiglu, add, rope and kv_append against the CPU", "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    const int64_t n_tokens = GENERATE(1, 7, 512);
    const int64_t n = 512;
    const auto x = k::test::random_floats(n_tokens * n, 3);
    const auto w = k::test::random_floats(n, 4);
    const auto u = k::test::random_floats(n_tokens * n, 6);
    auto xb = upload(*dev, x), wb = upload(*dev, w), ub = upload(*dev, u);
    auto yb = zeros(*dev, x.size() * sizeof(float));

    std::vector<float> want(x.size());
    k::rms_norm(x.data(), w.data(), want.data(), n_tokens, n, 1e-5f);
    kc::rms_norm(xb, &wb, yb, n_tokens, n, 1e-5f);
    CHECK(max_rel(download<float>(*dev, yb, x.size()), want) < 2e-6);

    k::swiglu(x.data(), u.data(), want.data(), x.size());
    kc::swiglu(xb, ub, yb, static_cast<int64_t>(x.size()));
    CHECK(max_rel(download<float>(*dev, yb, x.size()), want) < 2e-6);

    for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] + w[i % n];
    kc::add(xb, wb, yb, static_cast<int64_t>(x.size()), n);
    CHECK(download<float>(*dev, yb, x.size()) == want);   // one f32 addition: bit for bit

    for (const k::rope_mode mode : {k::rope_mode::normal, k::rope_mode::neox}) {
        const int64_t n_head = 8, head_dim = 64;
        std::vector<int32_t> pos(static_cast<size_t>(n_tokens));
        for (int64_t t = 0; t < n_tokens; ++t) pos[t] = static_cast<int32_t>(t * 8);   // up to 4088
        const k::rope_params p{head_dim, 10000.0f, 1.0f, mode};
        std::vector<float> cpu = x;
        k::rope(cpu.data(), n_tokens, n_head, head_dim, pos.data(), p);
        auto rb = upload(*dev, x);
        auto pb = upload(*dev, pos);
        kc::rope(rb, pb, n_tokens, n_head, head_dim, p);
        const auto got = download<float>(*dev, rb, x.size());
        double worst = 0;
        for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - cpu[i]));
        CHECK(worst < 1e-5);
    }

    // K/V rows into an f16 cache at position 3: the CPU's f16 rounding, bit for bit.
    auto cache = zeros(*dev, static_cast<size_t>(n_tokens + 3) * n * sizeof(uint16_t));
    kc::kv_append_f16(xb, cache, 3, n_tokens, n);
    const auto rows = download<uint16_t>(*dev, cache, static_cast<size_t>(n_tokens + 3) * n);
    size_t mismatches = 0;
    for (size_t i = 0; i < x.size(); ++i) mismatches += rows[3 * n + i] != k::fp32_to_fp16(x[i]);
    CHECK(mismatches == 0);
}

TEST_CASE("cuda device: a buffer copy past its end is refused with a message", "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    auto b = kc::buffer::create(*dev, 16);
    REQUIRE(b.has_value());
    const std::vector<uint8_t> data(32, 1);
    auto s = b->upload(data.data(), data.size());
    REQUIRE_FALSE(s.has_value());
    CHECK(s.message().find("past a buffer of 16") != std::string::npos);
}

TEST_CASE("cuda device: without a driver or device, creation fails with the runtime's reason", "[no_device]") {
    auto d = kc::device::create();
    if (d) HEARTH_SKIP("a CUDA device is present (" << (*d)->info().name << "): the no-device path is not what runs here");
    std::printf("cuda without a device: %s\n", d.message().c_str());
    CHECK(d.message().rfind("no CUDA device", 0) == 0);
    CHECK(d.message().find("error ") != std::string::npos);
}
