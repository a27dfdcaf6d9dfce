// The mixture-of-experts operations on the device against the CPU's arithmetic (inference/graph/moe.cpp,
// restated here step for step): the router's picks and weights, the experts' products against
// kernels::matmul of each expert's rows and the device's own matmul, the weighted sum bit for bit.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/quant.h"
#include "kernels/thread_pool.h"
#include "kernels/vulkan/ops.h"
#include "tests/kernels/quant_test_util.h"
#include "tests/kernels/vulkan/vulkan_test_device.h"

namespace k = hearth::kernels;
namespace kv = hearth::kernels::vulkan;
using k::tensor_type;

namespace {

// inference/graph/moe.cpp's router: softmax, the top n_used (ties to the lower id), renormalised.
void route_cpu(const std::vector<float> & logits, int64_t n_tokens, int64_t n_expert, int64_t n_used,
               std::vector<int32_t> & ids, std::vector<float> & weights) {
    std::vector<float> probs(logits.size());
    k::softmax(logits.data(), probs.data(), n_tokens, n_expert);
    std::vector<int32_t> order(static_cast<size_t>(n_expert));
    ids.assign(static_cast<size_t>(n_tokens * n_used), 0);
    weights.assign(ids.size(), 0.0f);
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float * p = probs.data() + t * n_expert;
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + n_used, order.end(),
                          [&](int32_t a, int32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
        double sum_d = 0.0;
        for (int64_t j = 0; j < n_used; ++j) sum_d += p[order[static_cast<size_t>(j)]];
        const float sum = std::max(static_cast<float>(sum_d), 6.103515625e-5f);
        for (int64_t j = 0; j < n_used; ++j) {
            ids[static_cast<size_t>(t * n_used + j)] = order[static_cast<size_t>(j)];
            weights[static_cast<size_t>(t * n_used + j)] = p[order[static_cast<size_t>(j)]] / sum;
        }
    }
}

}  // namespace

TEST_CASE("vulkan moe_route picks the CPU's experts, ties to the lower id, with its weights", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n_tokens = GENERATE(1, 7, 67);
    const int64_t n_expert = GENERATE(8, 60, 128);
    const int64_t n_used = GENERATE(1, 2, 8);
    auto logits = k::test::random_floats(n_tokens * n_expert, 61, 3.0f);
    // Token 0: the best expert tied by a higher id, and a tie on the border of the picks (the
    // lower id is taken). Where there are enough tokens, one whose logits are all equal.
    float * l0 = logits.data();
    const int64_t best = std::max_element(l0, l0 + n_expert) - l0;
    l0[n_expert - 1 == best ? 0 : n_expert - 1] = l0[best];
    std::vector<int32_t> ids_before;
    std::vector<float> w_before;
    route_cpu(logits, 1, n_expert, std::min<int64_t>(n_used + 1, n_expert), ids_before, w_before);
    if (n_used < n_expert) {
        const int32_t last = ids_before[static_cast<size_t>(n_used - 1)];
        // The best expert not picked takes the last pick's logit: the tie goes to the lower id.
        const int32_t next = ids_before[static_cast<size_t>(n_used)];
        if (last != next) l0[next] = l0[last];
    }
    if (n_tokens > 3) std::fill(logits.begin() + 3 * n_expert, logits.begin() + 4 * n_expert, 0.25f);
    std::vector<int32_t> want_ids;
    std::vector<float> want_w;
    route_cpu(logits, n_tokens, n_expert, n_used, want_ids, want_w);
    for (auto & td : kv::test::test_devices()) {
        INFO("tokens " << n_tokens << " experts " << n_expert << " used " << n_used << " " << td.label);
        auto lb = kv::test::upload(*td.dev, logits);
        auto ib = kv::test::zeros(*td.dev, want_ids.size() * sizeof(int32_t));
        auto wb = kv::test::zeros(*td.dev, want_w.size() * sizeof(float));
        auto s = kv::test::new_stream(*td.dev);
        kv::moe_route(s, lb, ib, wb, n_tokens, n_expert, n_used);
        kv::test::run(s);
        CHECK(kv::test::download<int32_t>(ib, want_ids.size()) == want_ids);
        const auto got = kv::test::download<float>(wb, want_w.size());
        // The device's exp is not the CPU's expf (a few ulp): the weights agree to that.
        double worst = 0;
        for (size_t i = 0; i < want_w.size(); ++i)
            worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want_w[i]) / want_w[i]);
        CHECK(worst <= 1e-5);
        kv::test::report("moe_route weights (relative)", td, worst, "1e-5");
        kv::test::require_validation_silent(td);
    }
}

TEST_CASE("vulkan matmul_experts: each pick's product is matmul's of its expert's rows; integer dot products "
          "equal to the scalar sums",
          "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n_tokens = GENERATE(1, 5);
    const bool x_per_pick = GENERATE(false, true);
    const int64_t n_expert = 4, n_used = 3, expert_rows = 67;
    const int64_t n_picks = n_tokens * n_used, x_rows = x_per_pick ? n_picks : n_tokens;
    // Picks as a router makes them (distinct per token), expert 3 never picked.
    std::vector<int32_t> ids(static_cast<size_t>(n_picks));
    for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t j = 0; j < n_used; ++j) ids[static_cast<size_t>(t * n_used + j)] = static_cast<int32_t>((t + j) % 3);
    k::thread_pool pool(1);
    k::matmul_context ctx;
    const tensor_type types[] = {tensor_type::q8_0, tensor_type::q4_0, tensor_type::q5_0, tensor_type::q4_k,
                                 tensor_type::q6_k, tensor_type::f16, tensor_type::f32};
    for (const tensor_type t : types) {
        std::vector<float> by_mode[2][2];   // per (subgroup, integer dot)
        for (auto * tdp : kv::test::product_devices()) {
            auto & td = *tdp;
            INFO("type " << k::tensor_type_info(t).name << " tokens " << n_tokens << " per pick " << x_per_pick << " "
                         << td.label);
            // Whole super-blocks; the plain types a row that ends mid-chunk (the shader's tail).
            const bool plain = t == tensor_type::f16 || t == tensor_type::f32;
            const int64_t n_cols = plain ? 172 : 256;
            const auto x = k::test::random_floats(x_rows * n_cols, 71);
            const size_t row_bytes = k::row_size(t, n_cols);
            std::vector<uint8_t> m;
            for (int64_t r = 0; r < n_expert * expert_rows; ++r) {
                const auto row = k::test::random_weight_row(t, n_cols, 300 + static_cast<uint32_t>(r));
                m.insert(m.end(), row.begin(), row.end());
            }
            const bool q8_k = kv::takes_q8_k_activations(t);
            const bool q8 = kv::takes_q8_0_activations(t) || q8_k;
            auto w = kv::test::upload(*td.dev, m);
            auto xb = kv::test::upload(*td.dev, x);
            auto xq = kv::test::zeros(*td.dev, q8_k ? kv::q8_k_activation_bytes(x_rows, n_cols)
                                                    : kv::q8_0_activation_bytes(x_rows, n_cols));
            auto ib = kv::test::upload(*td.dev, ids);
            auto yb = kv::test::zeros(*td.dev, static_cast<size_t>(n_picks * expert_rows) * sizeof(float));
            // The device's matmul of each expert's rows (a buffer of their own) over every row of x.
            std::vector<kv::buffer> experts, dense;
            auto s = kv::test::new_stream(*td.dev);
            if (q8 && !q8_k) kv::quantize_q8_0(s, xb, xq, x_rows, n_cols);
            if (q8_k) kv::quantize_q8_k(s, xb, xq, x_rows, n_cols);
            const kv::weight_buffer wb{&w, t, n_expert * expert_rows, n_cols, row_bytes};
            kv::matmul_experts(s, wb, expert_rows, xb, x_per_pick, ib, yb, n_tokens, n_used, q8 ? &xq : nullptr);
            for (int64_t e = 0; e < n_expert; ++e) {
                const auto first = m.begin() + static_cast<std::ptrdiff_t>(e * expert_rows * row_bytes);
                experts.push_back(kv::test::upload(
                    *td.dev, std::vector<uint8_t>(first, first + static_cast<std::ptrdiff_t>(expert_rows * row_bytes))));
                dense.push_back(kv::test::zeros(*td.dev, static_cast<size_t>(x_rows * expert_rows) * sizeof(float)));
            }
            for (int64_t e = 0; e < n_expert; ++e)
                kv::matmul(s, {&experts[static_cast<size_t>(e)], t, expert_rows, n_cols, row_bytes}, xb,
                           dense[static_cast<size_t>(e)], x_rows, q8 ? &xq : nullptr);
            kv::test::run(s);
            const auto got = kv::test::download<float>(yb, static_cast<size_t>(n_picks * expert_rows));
            by_mode[td.dev->uses_subgroup()][td.dev->uses_integer_dot()] = got;

            size_t not_dense = 0;
            double worst_cpu = 0;
            std::vector<float> cpu(static_cast<size_t>(expert_rows));
            for (int64_t q = 0; q < n_picks; ++q) {
                const int32_t e = ids[static_cast<size_t>(q)];
                const int64_t xr = x_per_pick ? q : q / n_used;
                const auto dev = kv::test::download<float>(dense[static_cast<size_t>(e)],
                                                           static_cast<size_t>(x_rows * expert_rows));
                const uint8_t * we = m.data() + static_cast<size_t>(e * expert_rows) * row_bytes;
                k::matmul({t, we, expert_rows, n_cols, row_bytes}, x.data() + xr * n_cols, 1, cpu.data(), pool, ctx);
                std::vector<float> wrow(static_cast<size_t>(n_cols));
                for (int64_t r = 0; r < expert_rows; ++r) {
                    const float g = got[static_cast<size_t>(q * expert_rows + r)];
                    if (k::f32_bits(g) != k::f32_bits(dev[static_cast<size_t>(xr * expert_rows + r)])) ++not_dense;
                    k::dequantize_row(t, we + r * row_bytes, wrow.data(), n_cols);
                    double abs_sum = 0, w_abs = 0, amax = 0;
                    for (int64_t c = 0; c < n_cols; ++c) {
                        abs_sum += std::fabs(static_cast<double>(wrow[c]) * x[xr * n_cols + c]);
                        w_abs += std::fabs(wrow[c]);
                        amax = std::max(amax, static_cast<double>(std::fabs(x[xr * n_cols + c])));
                    }
                    // As the matmul test: 1e-5 of sum|w x| (the K-quants 1e-6) where the device
                    // converts the activations as the CPU does (q8_0, q8_K, f16), the q8 rounding
                    // bound for f32 weights.
                    const bool mirrors_cpu = q8 || t == tensor_type::f16;
                    const double rel = q8_k ? 1e-6 : 1e-5;
                    const double tol = mirrors_cpu ? rel * abs_sum + 1e-30 : w_abs * amax / 127.0 + 1e-5 * abs_sum;
                    const double diff = std::fabs(g - static_cast<double>(cpu[static_cast<size_t>(r)]));
                    if (mirrors_cpu) worst_cpu = std::max(worst_cpu, diff / (abs_sum + 1e-30));
                    if (diff > tol) FAIL_CHECK("pick " << q << " row " << r << ": " << g << " vs CPU " << cpu[r]);
                }
            }
            CHECK(not_dense == 0);
            if (q8 || t == tensor_type::f16)
                kv::test::report(std::string("matmul_experts ") + std::string(k::tensor_type_info(t).name) +
                                     " vs kernels::matmul (relative to sum|w*x|)",
                                 td, worst_cpu, q8_k ? "1e-6" : "1e-5");
            kv::test::require_validation_silent(td);
        }
        for (const bool sg : {false, true}) {
            const auto & idot = by_mode[sg][1];
            const auto & scalar = by_mode[sg][0];
            if (idot.empty() || scalar.empty()) continue;
            INFO("type " << k::tensor_type_info(t).name << (sg ? " subgroup" : " plain") << ": integer dot vs scalar");
            size_t mismatches = 0;
            for (size_t i = 0; i < idot.size(); ++i) mismatches += k::f32_bits(idot[i]) != k::f32_bits(scalar[i]);
            CHECK(mismatches == 0);
        }
    }
}

TEST_CASE("vulkan moe_combine adds the weighted picks in order, bit for bit", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const int64_t n_tokens = GENERATE(1, 7, 67);
    const int64_t n_used = GENERATE(1, 2, 8);
    const int64_t n = 1000;
    const auto x = k::test::random_floats(n_tokens * n_used * n, 81);
    const auto w = k::test::random_floats(n_tokens * n_used, 82);
    // inference/graph/moe.cpp: each pick's output times its weight into a slot, the slots added in order.
    std::vector<float> want(static_cast<size_t>(n_tokens * n));
    std::vector<float> slot(static_cast<size_t>(n));
    for (int64_t t = 0; t < n_tokens; ++t) {
        float * o = want.data() + t * n;
        for (int64_t j = 0; j < n_used; ++j) {
            const float * d = x.data() + (t * n_used + j) * n;
            const float wj = w[static_cast<size_t>(t * n_used + j)];
            for (int64_t i = 0; i < n; ++i) slot[static_cast<size_t>(i)] = d[i] * wj;
            if (j == 0) std::memcpy(o, slot.data(), sizeof(float) * static_cast<size_t>(n));
            else k::add(o, slot.data(), o, static_cast<size_t>(n));
        }
    }
    for (auto & td : kv::test::test_devices()) {
        INFO("tokens " << n_tokens << " used " << n_used << " " << td.label);
        auto xb = kv::test::upload(*td.dev, x);
        auto wb = kv::test::upload(*td.dev, w);
        auto yb = kv::test::zeros(*td.dev, want.size() * sizeof(float));
        auto s = kv::test::new_stream(*td.dev);
        kv::moe_combine(s, xb, wb, yb, n_tokens, n_used, n);
        kv::test::run(s);
        CHECK(kv::test::download<float>(yb, want.size()) == want);
        kv::test::require_validation_silent(td);
    }
}
