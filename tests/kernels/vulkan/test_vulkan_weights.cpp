// The weight decoding and products on the device against the CPU kernels: dequantize bit for bit,
// matmul against kernels::matmul (tight: both quantize the activations alike, to q8_0, q8_K or
// f16, and add exact integer or f16 products) and against a double-precision product of the
// CPU-decoded weights and f32 activations (loose: the activations' rounding), the other way round
// for f32 weights; the integer-dot products against the scalar ones (bit for bit); the
// activations' q8_0 and q8_K forms against kernels::quantize_row, byte for byte.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "kernels/thread_pool.h"
#include "kernels/vulkan/ops.h"
#include "tests/kernels/quant_test_util.h"
#include "tests/kernels/vulkan/vulkan_test_device.h"

namespace k = hearth::kernels;
namespace kv = hearth::kernels::vulkan;
using k::tensor_type;

namespace {

const tensor_type k_types[] = {tensor_type::q8_0, tensor_type::q4_0, tensor_type::q5_0, tensor_type::q4_k,
                               tensor_type::q6_k, tensor_type::f16, tensor_type::f32};

// Row lengths for a type: whole super-blocks, and for the plain types one that ends mid-chunk
// (172: stories260K's feed-forward width).
bool takes_cols(tensor_type t, int64_t n_cols) {
    if (n_cols % 32 == 0) return n_cols % k::tensor_type_info(t).block_size == 0;
    return t == tensor_type::f16 || t == tensor_type::f32;
}

// n_rows rows of n_cols weights, random quants with ordinary scales, packed row_bytes apart.
std::vector<uint8_t> random_matrix(tensor_type t, int64_t n_rows, int64_t n_cols, uint32_t seed) {
    std::vector<uint8_t> m;
    for (int64_t r = 0; r < n_rows; ++r) {
        const auto row = k::test::random_weight_row(t, n_cols, seed + static_cast<uint32_t>(r));
        m.insert(m.end(), row.begin(), row.end());
    }
    return m;
}

}  // namespace

TEST_CASE("vulkan dequantize: every weight type decodes as the CPU does, bit for bit", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n_rows = GENERATE(1, 7, 67);
    const int64_t n_cols = GENERATE(172, 256, 768);
    for (auto & td : kv::test::test_devices()) {
        for (const tensor_type t : k_types) {
            if (!takes_cols(t, n_cols)) continue;
            INFO("type " << k::tensor_type_info(t).name << " rows " << n_rows << " cols " << n_cols << " " << td.label);
            const size_t row_bytes = k::row_size(t, n_cols);
            const auto m = random_matrix(t, n_rows, n_cols, 11);
            std::vector<float> want(static_cast<size_t>(n_rows * n_cols));
            for (int64_t r = 0; r < n_rows; ++r)
                k::dequantize_row(t, m.data() + r * row_bytes, want.data() + r * n_cols, n_cols);
            auto w = kv::test::upload(*td.dev, m);
            auto out = kv::test::zeros(*td.dev, want.size() * sizeof(float));
            auto s = kv::test::new_stream(*td.dev);
            kv::dequantize(s, {&w, t, n_rows, n_cols, row_bytes}, out);
            kv::test::run(s);
            const auto got = kv::test::download<float>(out, want.size());
            size_t mismatches = 0;
            for (size_t i = 0; i < want.size(); ++i)
                if (k::f32_bits(got[i]) != k::f32_bits(want[i])) {
                    if (mismatches == 0) UNSCOPED_INFO("first at " << i << ": " << got[i] << " vs " << want[i]);
                    ++mismatches;
                }
            CHECK(mismatches == 0);
            kv::test::require_validation_silent(td);
        }
    }
}

TEST_CASE("vulkan matmul: every weight type against the CPU, 1, 13 and 512 tokens, odd row counts; integer dot "
          "products equal to the scalar sums, bit for bit",
          "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n_tokens = GENERATE(1, 13, 512);   // 13: a whole block of 8 tokens and a part
    const int64_t n_rows = GENERATE(1, 67, 130);      // not multiples of 8 or 64
    if (n_tokens == 512 && n_rows != 67) return;      // the long batch once: lavapipe is slow
    const int64_t cols = GENERATE(172, 768);
    if (n_tokens == 512 && cols != 768) return;
    const int64_t n_cols = n_tokens == 512 ? 512 : cols;
    k::thread_pool pool(1);
    k::matmul_context ctx;
    for (const tensor_type t : k_types) {
        if (!takes_cols(t, n_cols)) continue;
        const size_t row_bytes = k::row_size(t, n_cols);
        const auto m = random_matrix(t, n_rows, n_cols, 23);
        const auto x = k::test::random_floats(n_tokens * n_cols, 5);
        std::vector<float> wdeq(static_cast<size_t>(n_rows * n_cols));
        for (int64_t r = 0; r < n_rows; ++r)
            k::dequantize_row(t, m.data() + r * row_bytes, wdeq.data() + r * n_cols, n_cols);
        std::vector<float> cpu(static_cast<size_t>(n_tokens * n_rows));
        k::matmul({t, m.data(), n_rows, n_cols, row_bytes}, x.data(), n_tokens, cpu.data(), pool, ctx);
        const bool q8_0 = kv::takes_q8_0_activations(t), q8_k = kv::takes_q8_k_activations(t);
        // The results per (subgroup, integer dot): the two sums of each reduction must be equal.
        std::vector<float> by_mode[2][2];

        for (auto * td : kv::test::product_devices()) {
            INFO("type " << k::tensor_type_info(t).name << " tokens " << n_tokens << " rows " << n_rows << " "
                         << td->label);
            auto w = kv::test::upload(*td->dev, m);
            auto xb = kv::test::upload(*td->dev, x);
            auto xq = kv::test::zeros(*td->dev, q8_k ? kv::q8_k_activation_bytes(n_tokens, n_cols)
                                                     : kv::q8_0_activation_bytes(n_tokens, n_cols));
            auto yb = kv::test::zeros(*td->dev, cpu.size() * sizeof(float));
            auto s = kv::test::new_stream(*td->dev);
            if (q8_0) kv::quantize_q8_0(s, xb, xq, n_tokens, n_cols);
            if (q8_k) kv::quantize_q8_k(s, xb, xq, n_tokens, n_cols);
            kv::matmul(s, {&w, t, n_rows, n_cols, row_bytes}, xb, yb, n_tokens, q8_0 || q8_k ? &xq : nullptr);
            kv::test::run(s);
            const auto got = kv::test::download<float>(yb, cpu.size());
            by_mode[td->dev->uses_subgroup()][td->dev->uses_integer_dot()] = got;

            // Where the device converts the activations as the CPU does (q8_0 and q8_K quants, f16),
            // it is held to the CPU's result and the f64 product of f32 activations is the loose
            // check; where both keep them f32 (f32 weights), the other way round.
            const bool mirrors_cpu = t != tensor_type::f32;
            double worst_exact = 0, worst_cpu = 0;
            for (int64_t tk = 0; tk < n_tokens; ++tk) {
                const float * xr = x.data() + tk * n_cols;
                float amax = 0;
                for (int64_t c = 0; c < n_cols; ++c) amax = std::max(amax, std::fabs(xr[c]));
                for (int64_t r = 0; r < n_rows; ++r) {
                    const float * wr = wdeq.data() + r * n_cols;
                    double ref = 0, abs_sum = 0, w_abs = 0;
                    for (int64_t c = 0; c < n_cols; ++c) {
                        ref += static_cast<double>(wr[c]) * xr[c];
                        abs_sum += std::fabs(static_cast<double>(wr[c]) * xr[c]);
                        w_abs += std::fabs(wr[c]);
                    }
                    const double g = got[tk * n_rows + r], c = cpu[tk * n_rows + r];
                    // f32 sums of n_cols products in another order: within 1e-5 of the sum of
                    // magnitudes; the K-quants' integer sums scaled per sub-block, 1e-6.
                    const double tight = (q8_k ? 1e-6 : 1e-5) * abs_sum + 1e-30;
                    // Rounding each activation to q8 (|error| <= amax / 254) or f16: twice that bound.
                    const double loose = w_abs * amax / 127.0 + tight;
                    worst_exact = std::max(worst_exact, std::fabs(g - ref) / (abs_sum + 1e-30));
                    worst_cpu = std::max(worst_cpu, std::fabs(g - c) / (abs_sum + 1e-30));
                    if (std::fabs(g - ref) > (mirrors_cpu ? loose : tight))
                        FAIL_CHECK("row " << r << " token " << tk << ": " << g << " vs f64 " << ref);
                    if (std::fabs(g - c) > (mirrors_cpu ? tight : loose))
                        FAIL_CHECK("row " << r << " token " << tk << ": " << g << " vs CPU " << c);
                }
            }
            const std::string op = std::string("matmul ") + std::string(k::tensor_type_info(t).name);
            const char * tight_tol = q8_k ? "1e-6" : "1e-5", * loose_tol = "sum|w|*amax(x)/127";
            kv::test::report(op + " vs f64 of f32 activations (relative to sum|w*x|)", *td, worst_exact,
                             mirrors_cpu ? loose_tol : tight_tol);
            kv::test::report(op + " vs kernels::matmul (relative to sum|w*x|)", *td, worst_cpu,
                             mirrors_cpu ? tight_tol : loose_tol);
            kv::test::require_validation_silent(*td);
        }
        for (const bool sg : {false, true}) {
            const auto & idot = by_mode[sg][1];
            const auto & scalar = by_mode[sg][0];
            if (idot.empty() || scalar.empty()) continue;
            INFO("type " << k::tensor_type_info(t).name << " tokens " << n_tokens << " rows " << n_rows
                         << (sg ? " subgroup" : " plain") << ": integer dot vs scalar");
            size_t mismatches = 0;
            for (size_t i = 0; i < idot.size(); ++i) mismatches += k::f32_bits(idot[i]) != k::f32_bits(scalar[i]);
            CHECK(mismatches == 0);
        }
    }
}

TEST_CASE("vulkan quantize_q8_0: activations quantize as the CPU quantizes them", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n_tokens = GENERATE(1, 7, 512);
    const int64_t n_cols = 896;
    auto x = k::test::random_floats(n_tokens * n_cols, 51, 3.0f);
    for (int j = 0; j < 32; ++j) x[32 + j] = 0.0f;   // an all-zero block: d = 0, quants 0
    for (auto & td : kv::test::test_devices()) {
        INFO("tokens " << n_tokens << " " << td.label);
        auto xb = kv::test::upload(*td.dev, x);
        auto xq = kv::test::zeros(*td.dev, kv::q8_0_activation_bytes(n_tokens, n_cols));
        auto s = kv::test::new_stream(*td.dev);
        kv::quantize_q8_0(s, xb, xq, n_tokens, n_cols);
        kv::test::run(s);
        const auto got = kv::test::download<uint32_t>(xq, kv::q8_0_activation_bytes(n_tokens, n_cols) / 4);
        std::vector<uint8_t> want(k::row_size(tensor_type::q8_0, n_cols));
        size_t mismatches = 0;
        for (int64_t tk = 0; tk < n_tokens; ++tk) {
            k::quantize_row(tensor_type::q8_0, x.data() + tk * n_cols, want.data(), n_cols);
            for (int64_t b = 0; b < n_cols / 32; ++b) {
                const uint32_t * g = got.data() + (tk * (n_cols / 32) + b) * 9;
                const uint8_t * w = want.data() + b * 34;
                uint16_t d16;
                std::memcpy(&d16, w, 2);
                if (g[0] != k::f32_bits(k::fp16_to_fp32(d16)) || std::memcmp(g + 1, w + 2, 32) != 0) ++mismatches;
            }
        }
        CHECK(mismatches == 0);
        kv::test::require_validation_silent(td);
    }
}

TEST_CASE("vulkan quantize_q8_k: activations quantize as the CPU quantizes them, bsums and all", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n_tokens = GENERATE(1, 13, 512);
    const int64_t n_cols = GENERATE(256, 4864);   // 4864: the default model's feed-forward width, 19 blocks
    if (n_tokens == 512 && n_cols != 4864) return;
    auto x = k::test::random_floats(n_tokens * n_cols, 53, 3.0f);
    if (n_cols > 256) {
        for (int j = 0; j < 256; ++j) x[256 + j] = 0.0f;   // an all-zero block: d = 0, quants and bsums 0
        // The largest magnitude twice, with both signs: the first one's sign sets the scale's.
        x[517] = -20.0f;
        x[700] = 20.0f;
        for (int j = 0; j < 255; ++j) x[3 * 256 + j] *= 1e-4f;   // a block whose largest element is its last
    }
    std::vector<uint8_t> want(static_cast<size_t>(n_tokens) * k::row_size(tensor_type::q8_k, n_cols));
    for (int64_t tk = 0; tk < n_tokens; ++tk)
        k::quantize_row(tensor_type::q8_k, x.data() + tk * n_cols,
                        want.data() + tk * k::row_size(tensor_type::q8_k, n_cols), n_cols);
    for (auto & td : kv::test::test_devices()) {
        INFO("tokens " << n_tokens << " cols " << n_cols << " " << td.label);
        auto xb = kv::test::upload(*td.dev, x);
        auto xq = kv::test::zeros(*td.dev, kv::q8_k_activation_bytes(n_tokens, n_cols));
        REQUIRE(kv::q8_k_activation_bytes(n_tokens, n_cols) == want.size());
        auto s = kv::test::new_stream(*td.dev);
        kv::quantize_q8_k(s, xb, xq, n_tokens, n_cols);
        kv::test::run(s);
        const auto got = kv::test::download<uint8_t>(xq, want.size());
        const size_t block = k::row_size(tensor_type::q8_k, 256);
        size_t mismatches = 0;
        for (size_t b = 0; b < want.size() / block; ++b)
            if (std::memcmp(got.data() + b * block, want.data() + b * block, block) != 0) {
                if (mismatches == 0) UNSCOPED_INFO("first block that differs: " << b);
                ++mismatches;
            }
        CHECK(mismatches == 0);
        kv::test::require_validation_silent(td);
    }
}

// Not run by ctest (hidden tag): the device time of the products on quantized activations with and
// without integer dot products, for docs/gpu.md. `hearth_test_kernels_vulkan "[vulkan_timing]"`.
TEST_CASE("vulkan matmul timing: integer dot products against the scalar sums", "[.][vulkan_timing]") {
    if (!kv::test::have_device()) return;
    const int64_t n_rows = 896, n_cols = 4864;   // the default model's ffn_down
    for (const int64_t n_tokens : {int64_t{1}, int64_t{64}}) {
        for (const tensor_type t : {tensor_type::q8_0, tensor_type::q4_0, tensor_type::q5_0, tensor_type::q4_k,
                                    tensor_type::q6_k}) {
            const size_t row_bytes = k::row_size(t, n_cols);
            const auto m = random_matrix(t, n_rows, n_cols, 29);
            const auto x = k::test::random_floats(n_tokens * n_cols, 7);
            const bool q8_k = kv::takes_q8_k_activations(t);
            for (auto * td : kv::test::product_devices()) {
                auto w = kv::test::upload(*td->dev, m);
                auto xb = kv::test::upload(*td->dev, x);
                auto xq = kv::test::zeros(*td->dev, q8_k ? kv::q8_k_activation_bytes(n_tokens, n_cols)
                                                         : kv::q8_0_activation_bytes(n_tokens, n_cols));
                auto yb = kv::test::zeros(*td->dev, static_cast<size_t>(n_tokens * n_rows) * sizeof(float));
                auto s = kv::test::new_stream(*td->dev);
                if (q8_k) kv::quantize_q8_k(s, xb, xq, n_tokens, n_cols);
                else kv::quantize_q8_0(s, xb, xq, n_tokens, n_cols);
                kv::test::run(s);
                double best_us = 1e30;
                for (int rep = 0; rep < 3; ++rep) {
                    kv::matmul(s, {&w, t, n_rows, n_cols, row_bytes}, xb, yb, n_tokens, &xq);
                    kv::test::run(s);
                    best_us = std::min(best_us, s.last_device_us());
                }
                std::printf("vulkan timing matmul %s %lldx%lld, %lld tokens, %s: %.0f us\n",
                            std::string(k::tensor_type_info(t).name).c_str(), static_cast<long long>(n_rows),
                            static_cast<long long>(n_cols), static_cast<long long>(n_tokens), td->label.c_str(),
                            best_us);
            }
        }
    }
}
