// The Vulkan backend through kernels/device_ops.h (make_device_ops): the operations reach their
// shaders with the backend's own state (GELU's table) and buffers made by the interface.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/device_ops.h"
#include "kernels/ops.h"
#include "kernels/vulkan/device_ops.h"
#include "tests/kernels/quant_test_util.h"
#include "tests/kernels/vulkan/vulkan_test_device.h"

namespace k = hearth::kernels;
namespace kv = hearth::kernels::vulkan;

TEST_CASE("vulkan device_ops: GELU, scale and LayerNorm through the interface match the CPU", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    auto ops = kv::make_device_ops({.validation = true});
    REQUIRE(ops.has_value());
    const int64_t n_tokens = 3, n = 333;
    const auto x = k::test::random_floats(n_tokens * n, 91, 5.0f);
    std::vector<float> want_gelu(x.size()), want_norm(x.size());
    k::gelu(x.data(), want_gelu.data(), x.size());
    for (auto & v : want_gelu) v *= 0.5f;
    k::layer_norm(x.data(), nullptr, nullptr, want_norm.data(), n_tokens, n, 1e-5f);
    const size_t bytes = x.size() * sizeof(float);
    auto xb = (*ops)->make_buffer(bytes);
    auto yb = (*ops)->make_buffer(bytes);
    auto nb = (*ops)->make_buffer(bytes);
    REQUIRE((xb && yb && nb));
    REQUIRE((*xb)->upload(x.data(), bytes).has_value());
    (*ops)->gelu(**xb, **yb, n_tokens * n);
    (*ops)->scale(**yb, 0.5f, n_tokens * n);
    (*ops)->layer_norm(**xb, nullptr, nullptr, **nb, n_tokens, n, 1e-5f);
    REQUIRE((*ops)->finish().has_value());
    std::vector<float> got_gelu(x.size()), got_norm(x.size());
    REQUIRE((*yb)->download(got_gelu.data(), bytes).has_value());
    REQUIRE((*nb)->download(got_norm.data(), bytes).has_value());
    CHECK(got_gelu == want_gelu);
    // Bit for bit where the device sums in double (lavapipe); f32 sums elsewhere.
    float worst = 0;
    for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(got_norm[i] - want_norm[i]));
    CHECK(worst <= 2e-6f);
}
