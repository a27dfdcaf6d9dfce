// RMS norm, LayerNorm, RoPE, SwiGLU, SiLU, GELU, add, mul and scale on the device against
// kernels/ops.h on random data, 1, 7 and 512 tokens and widths that are not multiples of the workgroup.
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

TEST_CASE("vulkan layer_norm matches the CPU, with and without weight and bias", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n_tokens = GENERATE(1, 7, 512);
    const int64_t n = GENERATE(7, 1000);
    const bool weighted = GENERATE(true, false);
    const bool biased = GENERATE(true, false);
    auto x = k::test::random_floats(n_tokens * n, 31, 2.0f);
    for (auto & v : x) v += 0.5f;   // a mean away from 0, so that subtracting it matters
    const auto w = k::test::random_floats(n, 32);
    const auto b = k::test::random_floats(n, 33);
    std::vector<float> want(x.size());
    k::layer_norm(x.data(), weighted ? w.data() : nullptr, biased ? b.data() : nullptr, want.data(), n_tokens, n,
                  1e-5f);
    for (auto & td : kv::test::test_devices()) {
        INFO("tokens " << n_tokens << " n " << n << " weighted " << weighted << " biased " << biased << " " << td.label);
        auto xb = kv::test::upload(*td.dev, x);
        auto wb = kv::test::upload(*td.dev, w);
        auto bb = kv::test::upload(*td.dev, b);
        auto yb = kv::test::zeros(*td.dev, x.size() * sizeof(float));
        auto s = kv::test::new_stream(*td.dev);
        kv::layer_norm(s, xb, weighted ? &wb : nullptr, biased ? &bb : nullptr, yb, n_tokens, n, 1e-5f);
        kv::layer_norm(s, xb, weighted ? &wb : nullptr, biased ? &bb : nullptr, xb, n_tokens, n, 1e-5f);   // in place
        kv::test::run(s);
        // Without double sums (devices without shaderFloat64) the mean and variance are f32 sums
        // in another order: relative to the row's scale (outputs of order 1), not to each value.
        const diff d = compare(kv::test::download<float>(yb, x.size()), want, 2e-6, 1.0);
        CHECK(d.ok);
        CHECK(kv::test::download<float>(xb, x.size()) == kv::test::download<float>(yb, x.size()));
        kv::test::report("layer_norm (absolute, values ~1)", td, d.worst, "2e-6");
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

TEST_CASE("vulkan rope with frequency factors and an attention factor matches the CPU", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n_tokens = GENERATE(1, 7, 67);
    const k::rope_mode mode = GENERATE(k::rope_mode::normal, k::rope_mode::neox);
    const int32_t n_rot = GENERATE(96, 48);
    const int64_t n_head = 3, head_dim = 96;
    // llama3-like factors (1 for the fast pairs, up to 8 for the slow ones) with phi3's magnitude
    // correction: cos and sin times 1.19.
    std::vector<float> factors(static_cast<size_t>(n_rot / 2));
    for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + 7.0f * static_cast<float>(i) / factors.size() + 0.013f * i;
    const float attn_factor = 1.19f;
    const k::rope_params p{n_rot, 5e5f, 0.75f, mode, factors.data(), attn_factor};
    const auto x = k::test::random_floats(n_tokens * n_head * head_dim, 19);
    std::vector<int32_t> pos(static_cast<size_t>(n_tokens));
    std::mt19937 rng(2);
    for (auto & v : pos) v = static_cast<int32_t>(rng() % 8192);
    std::vector<float> want = x;
    k::rope(want.data(), n_tokens, n_head, head_dim, pos.data(), p);
    for (auto & td : kv::test::test_devices()) {
        INFO("tokens " << n_tokens << " neox " << (mode == k::rope_mode::neox) << " n_rot " << n_rot << " " << td.label);
        auto xb = kv::test::upload(*td.dev, x);
        auto pb = kv::test::upload(*td.dev, pos);
        auto fb = kv::test::upload(*td.dev, factors);
        auto s = kv::test::new_stream(*td.dev);
        k::rope_params dp = p;
        dp.freq_factors = nullptr;   // the device reads its own copy
        kv::rope(s, xb, pb, n_tokens, n_head, head_dim, dp, &fb);
        kv::test::run(s);
        // As above: the angles are the CPU's (its division by the factor too), cos and sin are not
        // correctly rounded; values of order attn_factor.
        const diff d = compare(kv::test::download<float>(xb, x.size()), want, 1e-5, 1.0);
        CHECK(d.ok);
        kv::test::report("rope with freq_factors, attn_factor 1.19 (absolute, values ~1)", td, d.worst, "1e-5");
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

TEST_CASE("vulkan silu matches the CPU", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n = GENERATE(1, 7, 4864 * 7 + 3);
    auto x = k::test::random_floats(n, 14, 6.0f);
    x[0] = -100.0f;   // exp of 100: past the polynomial's range
    std::vector<float> want(static_cast<size_t>(n));
    k::silu(x.data(), want.data(), static_cast<size_t>(n));
    for (auto & td : kv::test::test_devices()) {
        INFO("n " << n << " " << td.label);
        auto xb = kv::test::upload(*td.dev, x);
        auto yb = kv::test::zeros(*td.dev, want.size() * sizeof(float));
        auto s = kv::test::new_stream(*td.dev);
        kv::silu(s, xb, yb, n);
        kv::silu(s, xb, xb, n);   // in place
        kv::test::run(s);
        const auto got = kv::test::download<float>(yb, want.size());
        const diff d = compare(got, want, 2e-6, 1e-6);
        CHECK(d.ok);
        CHECK(kv::test::download<float>(xb, want.size()) == got);
        kv::test::report("silu (relative)", td, d.worst, "2e-6");
        kv::test::require_validation_silent(td);
    }
}

TEST_CASE("vulkan gelu gives the CPU's table values, bit for bit", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n = GENERATE(7, 4864 * 7 + 3);
    auto x = k::test::random_floats(n, 15, 6.0f);   // some past +-10, where the table is not read
    const float edges[] = {-10.0f, 10.0f, std::nextafter(-10.0f, 0.0f), std::nextafter(10.0f, 0.0f), 0.0f, -0.0f, 1e-8f};
    for (size_t i = 0; i < std::size(edges) && i < x.size(); ++i) x[i] = edges[i];
    std::vector<float> want(static_cast<size_t>(n));
    k::gelu(x.data(), want.data(), static_cast<size_t>(n));
    for (auto & td : kv::test::test_devices()) {
        INFO("n " << n << " " << td.label);
        auto table = kv::make_gelu_table(*td.dev);
        REQUIRE(table.has_value());
        auto xb = kv::test::upload(*td.dev, x);
        auto yb = kv::test::zeros(*td.dev, want.size() * sizeof(float));
        auto s = kv::test::new_stream(*td.dev);
        kv::gelu(s, xb, *table, yb, n);
        kv::test::run(s);
        const auto got = kv::test::download<float>(yb, want.size());
        size_t mismatches = 0;
        for (size_t i = 0; i < want.size(); ++i)
            if (k::f32_bits(got[i]) != k::f32_bits(want[i])) {
                if (mismatches == 0) UNSCOPED_INFO("first at " << i << ": gelu(" << x[i] << ") " << got[i] << " vs " << want[i]);
                ++mismatches;
            }
        CHECK(mismatches == 0);
        kv::test::require_validation_silent(td);
    }
}

TEST_CASE("vulkan mul (element by element and a vector over rows) and scale, bit for bit", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n = GENERATE(1, 7, 4864 * 7 + 3);
    const auto a = k::test::random_floats(n, 44);
    const auto b = k::test::random_floats(n, 45);
    std::vector<float> want_mul(static_cast<size_t>(n)), want_row(static_cast<size_t>(n)), want_scale = a;
    k::mul(a.data(), b.data(), want_mul.data(), static_cast<size_t>(n));
    // A vector as wide as one row times every row: the width a divisor of n (n itself where prime).
    const int64_t width = n % 7 == 0 ? 7 : n;
    for (int64_t i = 0; i < n; ++i) want_row[static_cast<size_t>(i)] = a[static_cast<size_t>(i)] * b[static_cast<size_t>(i % width)];
    for (auto & v : want_scale) v *= 0.0883883476f;   // 1 / sqrt(128)
    for (auto & td : kv::test::test_devices()) {
        INFO("n " << n << " width " << width << " " << td.label);
        auto ab = kv::test::upload(*td.dev, a);
        auto bb = kv::test::upload(*td.dev, b);
        auto prod = kv::test::zeros(*td.dev, a.size() * sizeof(float));
        auto rows = kv::test::zeros(*td.dev, a.size() * sizeof(float));
        auto s = kv::test::new_stream(*td.dev);
        kv::mul(s, ab, bb, prod, n, n);
        kv::mul(s, ab, bb, rows, n, width);
        kv::scale(s, ab, 0.0883883476f, n);
        kv::test::run(s);
        CHECK(kv::test::download<float>(prod, a.size()) == want_mul);
        CHECK(kv::test::download<float>(rows, a.size()) == want_row);
        CHECK(kv::test::download<float>(ab, a.size()) == want_scale);
        kv::test::require_validation_silent(td);
    }
}
