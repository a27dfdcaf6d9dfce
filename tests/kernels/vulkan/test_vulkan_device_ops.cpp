// The Vulkan backend through kernels/device_ops.h (make_device_ops): the operations reach their
// shaders with the backend's own state (GELU's table, the K-quant products' q8_K scratch) and
// buffers made by the interface.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "kernels/device_ops.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/quant.h"
#include "kernels/thread_pool.h"
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

namespace {

// The largest |got - want| of a product, relative to sum |w x| of its row.
double worst_relative(const std::vector<float> & got, const std::vector<float> & want, const std::vector<uint8_t> & m,
                      k::tensor_type t, const std::vector<float> & x, int64_t n_tokens, int64_t n_rows,
                      int64_t n_cols) {
    std::vector<float> w(static_cast<size_t>(n_cols));
    double worst = 0;
    for (int64_t r = 0; r < n_rows; ++r) {
        k::dequantize_row(t, m.data() + r * k::row_size(t, n_cols), w.data(), n_cols);
        for (int64_t tk = 0; tk < n_tokens; ++tk) {
            double abs_sum = 0;
            for (int64_t c = 0; c < n_cols; ++c) abs_sum += std::fabs(static_cast<double>(w[c]) * x[tk * n_cols + c]);
            const size_t i = static_cast<size_t>(tk * n_rows + r);
            worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]) / (abs_sum + 1e-30));
        }
    }
    return worst;
}

}  // namespace

TEST_CASE("vulkan device_ops: K-quant products quantize their input to q8_K themselves, once per unchanged input",
          "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    auto ops = kv::make_device_ops({.validation = true});
    REQUIRE(ops.has_value());
    const int64_t n_tokens = 13, n_rows = 67, n_cols = 768;
    const k::tensor_type types[] = {k::tensor_type::q4_k, k::tensor_type::q6_k};
    std::vector<std::vector<uint8_t>> m;
    for (const k::tensor_type t : types) {
        CHECK_FALSE((*ops)->takes_q8_0_activations(t));   // the interface's callers pass no x_q8 for them
        std::vector<uint8_t> rows;
        for (int64_t r = 0; r < n_rows; ++r) {
            const auto row = k::test::random_weight_row(t, n_cols, 500 + static_cast<uint32_t>(r));
            rows.insert(rows.end(), row.begin(), row.end());
        }
        m.push_back(std::move(rows));
    }
    const auto x = k::test::random_floats(n_tokens * n_cols, 93);
    std::vector<float> x_half = x;
    for (auto & v : x_half) v *= 0.5f;
    const size_t y_bytes = static_cast<size_t>(n_tokens * n_rows) * sizeof(float);
    auto xb = (*ops)->make_buffer(x.size() * sizeof(float));
    auto w0 = (*ops)->make_buffer(m[0].size());
    auto w1 = (*ops)->make_buffer(m[1].size());
    auto y0 = (*ops)->make_buffer(y_bytes);
    auto y1 = (*ops)->make_buffer(y_bytes);
    auto y2 = (*ops)->make_buffer(y_bytes);
    REQUIRE((xb && w0 && w1 && y0 && y1 && y2));
    REQUIRE((*xb)->upload(x.data(), x.size() * sizeof(float)).has_value());
    REQUIRE((*w0)->upload(m[0].data(), m[0].size()).has_value());
    REQUIRE((*w1)->upload(m[1].data(), m[1].size()).has_value());
    const k::device_weight wq4{w0->get(), types[0], n_rows, n_cols, k::row_size(types[0], n_cols)};
    const k::device_weight wq6{w1->get(), types[1], n_rows, n_cols, k::row_size(types[1], n_cols)};
    // Two products of one input (the second reuses its q8_K form), then the input halved in place:
    // the third product must see the new values.
    (*ops)->matmul(wq4, **xb, **y0, n_tokens, nullptr);
    (*ops)->matmul(wq6, **xb, **y1, n_tokens, nullptr);
    (*ops)->scale(**xb, 0.5f, n_tokens * n_cols);
    (*ops)->matmul(wq4, **xb, **y2, n_tokens, nullptr);
    REQUIRE((*ops)->finish().has_value());

    k::thread_pool pool(1);
    k::matmul_context ctx;
    const std::vector<float> * inputs[] = {&x, &x, &x_half};
    const size_t weight_of[] = {0, 1, 0};
    const std::array outs{y0->get(), y1->get(), y2->get()};
    for (size_t i = 0; i < 3; ++i) {
        const k::tensor_type t = types[weight_of[i]];
        const auto & mi = m[weight_of[i]];
        std::vector<float> want(static_cast<size_t>(n_tokens * n_rows)), got(want.size());
        k::matmul({t, mi.data(), n_rows, n_cols, k::row_size(t, n_cols)}, inputs[i]->data(), n_tokens, want.data(),
                  pool, ctx);
        REQUIRE(outs[i]->download(got.data(), y_bytes).has_value());
        INFO("product " << i << " (" << k::tensor_type_info(t).name << ")");
        CHECK(worst_relative(got, want, mi, t, *inputs[i], n_tokens, n_rows, n_cols) <= 1e-6);
    }
}
