// RMS norm, RoPE and SwiGLU on the device against kernels/ops.h on random data, 1, 7 and 512
// tokens and widths that are not multiples of the workgroup.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/ops.h"
#include "kernels/vulkan/ops.h"
#include "tests/kernels/quant_test_util.h"
#include "tests/kernels/vulkan/vulkan_test_device.h"

namespace k = hearth::kernels;
namespace kv = hearth::kernels::vulkan;

namespace {

// max |a - b| / (|b| + floor) over the elements, and whether every one is within tol.
struct diff {
    double worst = 0;
    bool ok = true;
};
diff compare(const std::vector<float> & got, const std::vector<float> & want, double tol, double floor) {
    diff d;
    for (size_t i = 0; i < want.size(); ++i) {
        const double e = std::fabs(static_cast<double>(got[i]) - want[i]) / (std::fabs(want[i]) + floor);
        d.worst = std::max(d.worst, e);
        if (!(e <= tol)) d.ok = false;   // NaN fails too
    }
    return d;
}

}  // namespace

TEST_CASE("vulkan rms_norm matches the CPU, with and without a weight", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n_tokens = GENERATE(1, 7, 512);
    const int64_t n = GENERATE(7, 896, 1000);
    const bool weighted = GENERATE(true, false);
    const auto x = k::test::random_floats(n_tokens * n, 3, 2.0f);
    const auto w = k::test::random_floats(n, 4);
    std::vector<float> want(x.size());
    k::rms_norm(x.data(), weighted ? w.data() : nullptr, want.data(), n_tokens, n, 1e-6f);
    for (auto & td : kv::test::test_devices()) {
        INFO("tokens " << n_tokens << " n " << n << " weighted " << weighted << " " << td.label);
        auto xb = kv::test::upload(*td.dev, x);
        auto wb = kv::test::upload(*td.dev, w);
        auto yb = kv::test::zeros(*td.dev, x.size() * sizeof(float));
        auto s = kv::test::new_stream(*td.dev);
        kv::rms_norm(s, xb, weighted ? &wb : nullptr, yb, n_tokens, n, 1e-6f);
        kv::test::run(s);
        // The device sums the squares in f32 in another order than the CPU's double sum.
        const diff d = compare(kv::test::download<float>(yb, x.size()), want, 2e-6, 1e-6);
        CHECK(d.ok);
        kv::test::report("rms_norm (relative)", td, d.worst, "2e-6");
        kv::test::require_validation_silent(td);
    }
}

TEST_CASE("vulkan rope matches the CPU, normal and NeoX, full and partial rotation", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n_tokens = GENERATE(1, 7, 512);
    const k::rope_mode mode = GENERATE(k::rope_mode::normal, k::rope_mode::neox);
    const int32_t n_rot = GENERATE(64, 32);
    const int64_t n_head = 3, head_dim = 64;
    const k::rope_params p{n_rot, 1e6f, 1.0f, mode};
    const auto x = k::test::random_floats(n_tokens * n_head * head_dim, 9);
    std::vector<int32_t> pos(static_cast<size_t>(n_tokens));
    std::mt19937 rng(1);
    for (auto & v : pos) v = static_cast<int32_t>(rng() % 4096);   // positions of a long context
    std::vector<float> want = x;
    k::rope(want.data(), n_tokens, n_head, head_dim, pos.data(), p);
    for (auto & td : kv::test::test_devices()) {
        INFO("tokens " << n_tokens << " neox " << (mode == k::rope_mode::neox) << " n_rot " << n_rot << " " << td.label);
        auto xb = kv::test::upload(*td.dev, x);
        auto pb = kv::test::upload(*td.dev, pos);
        auto s = kv::test::new_stream(*td.dev);
        kv::rope(s, xb, pb, n_tokens, n_head, head_dim, p);
        kv::test::run(s);
        const auto got = kv::test::download<float>(xb, x.size());
        // The angles are the CPU's to the bit; the device's cos and sin of angles up to ~4096 rad
        // are not correctly rounded: an absolute difference on values of order 1.
        const diff d = compare(got, want, 1e-5, 1.0);
        CHECK(d.ok);
        kv::test::report("rope (absolute, values ~1)", td, d.worst, "1e-5");
        kv::test::require_validation_silent(td);
    }
}

TEST_CASE("vulkan swiglu matches the CPU", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n = GENERATE(1, 7, 4864 * 7 + 3, 4864 * 512);
    const auto g = k::test::random_floats(n, 12, 4.0f);
    const auto u = k::test::random_floats(n, 13);
    std::vector<float> want(static_cast<size_t>(n));
    k::swiglu(g.data(), u.data(), want.data(), static_cast<size_t>(n));
    for (auto & td : kv::test::test_devices()) {
        INFO("n " << n << " " << td.label);
        auto gb = kv::test::upload(*td.dev, g);
        auto ub = kv::test::upload(*td.dev, u);
        auto yb = kv::test::zeros(*td.dev, want.size() * sizeof(float));
        auto s = kv::test::new_stream(*td.dev);
        kv::swiglu(s, gb, ub, yb, n);
        kv::test::run(s);
        const diff d = compare(kv::test::download<float>(yb, want.size()), want, 2e-6, 1e-6);
        CHECK(d.ok);
        kv::test::report("swiglu (relative)", td, d.worst, "2e-6");
        kv::test::require_validation_silent(td);
    }
}

TEST_CASE("vulkan add: a residual sum and a bias on every row, bit for bit", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n_tokens = GENERATE(1, 7, 512);
    const int64_t width = GENERATE(64, 1000);
    const int64_t n = n_tokens * width;
    const auto a = k::test::random_floats(n, 41);
    const auto r = k::test::random_floats(n, 42);
    const auto b = k::test::random_floats(width, 43);
    std::vector<float> want_sum(static_cast<size_t>(n)), want_bias = a;
    k::add(a.data(), r.data(), want_sum.data(), static_cast<size_t>(n));
    k::add_row(want_bias.data(), b.data(), n_tokens, width);
    for (auto & td : kv::test::test_devices()) {
        INFO("tokens " << n_tokens << " width " << width << " " << td.label);
        auto ab = kv::test::upload(*td.dev, a);
        auto rb = kv::test::upload(*td.dev, r);
        auto bb = kv::test::upload(*td.dev, b);
        auto sum = kv::test::zeros(*td.dev, a.size() * sizeof(float));
        auto s = kv::test::new_stream(*td.dev);
        kv::add(s, ab, rb, sum, n, n);
        kv::add(s, ab, bb, ab, n, width);   // in place
        kv::test::run(s);
        CHECK(kv::test::download<float>(sum, a.size()) == want_sum);
        CHECK(kv::test::download<float>(ab, a.size()) == want_bias);
        kv::test::require_validation_silent(td);
    }
}
