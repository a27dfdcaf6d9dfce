// The CUDA operations against the CPU kernels on random data, held to the tolerances docs/gpu.md
// states for the Vulkan shaders they mirror. Without a CUDA device (no driver, none present) each
// test is skipped with the reason (tests/skip.h); scripts/gpu-check runs them on a GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/device.h"
#include "kernels/cuda/ops.h"
#include "kernels/fp16.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/quant.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/cuda/cuda_test_device.h"
#include "tests/kernels/quant_test_util.h"
#include "tests/skip.h"

namespace k = hearth::kernels;
namespace kc = hearth::kernels::cuda;
using k::tensor_type;
using kc::test::download;
using kc::test::test_device;
using kc::test::upload;
using kc::test::zeros;

namespace {

// The weight types of the pinned Q4_K_M models (q4_K, q5_0, q6_K, q8_0, f32 norms), q4_0 and f16.
constexpr tensor_type k_weight_types[] = {tensor_type::q4_k, tensor_type::q5_0, tensor_type::q6_k, tensor_type::q8_0,
                                          tensor_type::q4_0, tensor_type::f16,  tensor_type::f32};

double max_rel(const std::vector<float> & got, const std::vector<float> & want) {
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i)
        worst = std::max(worst, std::fabs(double(got[i]) - want[i]) / std::max(1e-6, std::fabs(double(want[i]))));
    return worst;
}

double max_abs(const std::vector<float> & got, const std::vector<float> & want) {
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
    return worst;
}

// inference/graph/moe.cpp's router on the CPU: softmax, the top n_used (ties to the lower id), their
// probabilities over their double sum clamped at 6.103515625e-5. probs gets the softmax.
void route_cpu(const std::vector<float> & logits, int64_t n_tokens, int64_t n_expert, int64_t n_used,
               std::vector<float> & probs, std::vector<int32_t> & ids, std::vector<float> & weights) {
    probs.resize(logits.size());
    ids.resize(static_cast<size_t>(n_tokens * n_used));
    weights.resize(ids.size());
    k::softmax(logits.data(), probs.data(), n_tokens, n_expert);
    std::vector<int32_t> order(static_cast<size_t>(n_expert));
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float * p = probs.data() + t * n_expert;
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + n_used, order.end(),
                          [&](int32_t a, int32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
        double sum_d = 0.0;
        for (int64_t j = 0; j < n_used; ++j) sum_d += p[order[j]];
        const float sum = std::max(static_cast<float>(sum_d), 6.103515625e-5f);
        for (int64_t j = 0; j < n_used; ++j) {
            ids[t * n_used + j] = order[j];
            weights[t * n_used + j] = p[order[j]] / sum;
        }
    }
}

}  // namespace

TEST_CASE("cuda matmul: every weight type it declares against kernels::matmul, 1, 7, 13 and 512 tokens",
          "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    const int64_t n_tokens = GENERATE(1, 7, 13, 512);
    const int64_t n_rows = GENERATE(1, 67, 130);
    // 172: a tail (plain types only); 256: one super-block; 768: three (a group idle); 896: 28
    // blocks of 32 (Qwen2.5-Coder 0.5B's width: q5_0 and q8_0 there, no K-quant); 800: 25 blocks
    // of 32 (a row's last group of blocks partly idle, q8_0, q4_0 and q5_0); 1280: five
    // super-blocks (the groups go round twice).
    const int64_t n_cols = GENERATE(172, 256, 768, 800, 896, 1280);
    k::thread_pool pool(1);
    k::matmul_context ctx;
    for (const tensor_type t : k_weight_types) {
        if (n_cols % k::tensor_type_info(t).block_size != 0) continue;
        REQUIRE(kc::supports_weight(t));
        INFO("type " << k::tensor_type_info(t).name << " tokens " << n_tokens << " rows " << n_rows << " cols " << n_cols);
        const size_t row_bytes = k::row_size(t, n_cols);
        std::vector<uint8_t> m;
        for (int64_t r = 0; r < n_rows; ++r) {
            const auto row = k::test::random_weight_row(t, n_cols, 23 + static_cast<uint32_t>(r));
            m.insert(m.end(), row.begin(), row.end());
        }
        auto x = k::test::random_floats(n_tokens * n_cols, 5);
        // An all-zero first super-block of token 0 (q8_K: d = 0, no quant), and a magnitude tie of
        // opposite signs as its second one's largest (the first of them sets q8_K's sign).
        if (n_cols >= 256) std::fill(x.begin(), x.begin() + 256, 0.0f);
        if (n_cols >= 512) {
            x[300] = 9.0f;
            x[301] = -9.0f;
        }
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
    kc::kv_append(tensor_type::f16, xb, cache, 3, n_tokens, n);
    const auto rows = download<uint16_t>(*dev, cache, static_cast<size_t>(n_tokens + 3) * n);
    size_t mismatches = 0;
    for (size_t i = 0; i < x.size(); ++i) mismatches += rows[3 * n + i] != k::fp32_to_fp16(x[i]);
    CHECK(mismatches == 0);
}

TEST_CASE("cuda layer_norm: with and without weight and bias, in place, odd widths, against kernels::layer_norm",
          "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    const int64_t n_tokens = GENERATE(1, 7, 130);
    const int64_t n = GENERATE(1, 173, 512);
    auto x = k::test::random_floats(n_tokens * n, 31);
    for (auto & v : x) v += 3.0f;   // a mean far from 0, so the subtraction matters
    const auto w = k::test::random_floats(n, 32);
    const auto b = k::test::random_floats(n, 33);
    auto xb = upload(*dev, x), wb = upload(*dev, w), bb = upload(*dev, b);
    // Relative to max|z| * |w[i]| + |b[i]| with z the normalized row: a mean or scale one f32 step
    // apart (double sums in another order) moves the row's elements by about that much.
    std::vector<float> z(x.size());
    k::layer_norm(x.data(), nullptr, nullptr, z.data(), n_tokens, n, 1e-5f);
    for (const bool with_w : {false, true})
        for (const bool with_b : {false, true}) {
            INFO("tokens " << n_tokens << " n " << n << " weight " << with_w << " bias " << with_b);
            std::vector<float> want(x.size());
            k::layer_norm(x.data(), with_w ? w.data() : nullptr, with_b ? b.data() : nullptr, want.data(), n_tokens, n,
                          1e-5f);
            auto yb = zeros(*dev, x.size() * sizeof(float));
            kc::layer_norm(xb, with_w ? &wb : nullptr, with_b ? &bb : nullptr, yb, n_tokens, n, 1e-5f);
            const auto got = download<float>(*dev, yb, x.size());
            double worst = 0;
            for (int64_t t = 0; t < n_tokens; ++t) {
                double z_max = 0;
                for (int64_t i = 0; i < n; ++i) z_max = std::max(z_max, std::fabs(double(z[t * n + i])));
                for (int64_t i = 0; i < n; ++i) {
                    const double mag = z_max * (with_w ? std::fabs(double(w[i])) : 1.0) +
                                       (with_b ? std::fabs(double(b[i])) : 0.0);
                    worst = std::max(worst, std::fabs(double(got[t * n + i]) - want[t * n + i]) / std::max(mag, 1e-30));
                }
            }
            std::printf("cuda layer_norm tokens %lld n %lld weight %d bias %d: max difference %.3g\n",
                        (long long)n_tokens, (long long)n, with_w, with_b, worst);
            CHECK(worst < 2e-6);
        }
    // In place (y == x), as the layer graph calls it.
    std::vector<float> want(x.size());
    k::layer_norm(x.data(), w.data(), b.data(), want.data(), n_tokens, n, 1e-5f);
    kc::layer_norm(xb, &wb, &bb, xb, n_tokens, n, 1e-5f);
    CHECK(max_abs(download<float>(*dev, xb, x.size()), want) < 2e-5);
}

TEST_CASE("cuda rope: frequency factors and attention factor, partial rotation, against kernels::rope",
          "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    const int64_t n_tokens = GENERATE(1, 7, 130);
    const int64_t n_head = 3, head_dim = 80, n_rot = 52;   // 26 pairs, the last 28 dimensions pass through
    const auto x = k::test::random_floats(n_tokens * n_head * head_dim, 41);
    std::vector<int32_t> pos(static_cast<size_t>(n_tokens));
    for (int64_t t = 0; t < n_tokens; ++t) pos[t] = static_cast<int32_t>(t * 31 + 5);   // up to 4004
    std::vector<float> factors(static_cast<size_t>(n_rot / 2));
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(1.0f, 40.0f);   // llama3's rope_freqs span 1 to 32
    for (auto & f : factors) f = dist(rng);
    auto pb = upload(*dev, pos), fb = upload(*dev, factors);
    for (const k::rope_mode mode : {k::rope_mode::normal, k::rope_mode::neox})
        for (const bool with_factors : {false, true}) {
            INFO("tokens " << n_tokens << " neox " << (mode == k::rope_mode::neox) << " factors " << with_factors);
            k::rope_params p{static_cast<int32_t>(n_rot), 500000.0f, 0.5f, mode};
            p.freq_factors = with_factors ? factors.data() : nullptr;   // the host pointer: the CPU reads it, CUDA not
            p.attn_factor = 1.3f;
            std::vector<float> cpu = x;
            k::rope(cpu.data(), n_tokens, n_head, head_dim, pos.data(), p);
            auto rb = upload(*dev, x);
            kc::rope(rb, pb, n_tokens, n_head, head_dim, p, with_factors ? &fb : nullptr);
            const auto got = download<float>(*dev, rb, x.size());
            const double worst = max_abs(got, cpu);
            std::printf("cuda rope tokens %lld neox %d factors %d attn_factor 1.3: max difference %.3g\n",
                        (long long)n_tokens, mode == k::rope_mode::neox, with_factors, worst);
            CHECK(worst < 1e-5);
            // The dimensions past n_rot are untouched.
            size_t moved = 0;
            for (int64_t r = 0; r < n_tokens * n_head; ++r)
                for (int64_t i = n_rot; i < head_dim; ++i) moved += got[r * head_dim + i] != x[r * head_dim + i];
            CHECK(moved == 0);
        }
}

TEST_CASE("cuda silu, mul and scale against the CPU, odd lengths", "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    const int64_t n = GENERATE(1, 63, 4099);
    const auto x = k::test::random_floats(n, 51, 3.0f);
    const auto b = k::test::random_floats(n, 52);
    auto xb = upload(*dev, x), bb = upload(*dev, b);
    auto yb = zeros(*dev, static_cast<size_t>(n) * sizeof(float));
    std::vector<float> want(x.size());
    INFO("n " << n);

    k::silu(x.data(), want.data(), x.size());
    kc::silu(xb, yb, n);
    CHECK(max_rel(download<float>(*dev, yb, x.size()), want) < 2e-6);   // expf against exp_ggml, as swiglu

    k::mul(x.data(), b.data(), want.data(), x.size());
    kc::mul(xb, bb, yb, n, n);
    CHECK(download<float>(*dev, yb, x.size()) == want);   // one f32 multiplication: bit for bit

    // A vector as wide as one row times every row (63 = 9 rows of 7; the others one row).
    const int64_t width = n % 7 == 0 ? 7 : n;
    for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] = x[static_cast<size_t>(i)] * b[static_cast<size_t>(i % width)];
    kc::mul(xb, bb, yb, n, width);
    CHECK(download<float>(*dev, yb, x.size()) == want);

    for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] * 0.125f;
    auto sb = upload(*dev, x);
    kc::scale(sb, 0.125f, n);
    CHECK(download<float>(*dev, sb, x.size()) == want);

    // In place.
    k::silu(x.data(), want.data(), x.size());
    kc::silu(xb, xb, n);
    CHECK(max_rel(download<float>(*dev, xb, x.size()), want) < 2e-6);
}

TEST_CASE("cuda gelu: every f16 input and the cut-offs at -10 and 10 against kernels::gelu", "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    std::vector<float> x;
    for (uint32_t h = 0; h < (1u << 16); ++h) {
        const float v = k::fp16_to_fp32(static_cast<uint16_t>(h));
        if (std::isfinite(v)) x.push_back(v);
    }
    for (const float v : {-10.5f, -10.0f, -9.999f, -9.99f, 9.99f, 9.999f, 10.0f, 10.5f, 1e6f, -1e6f, 0.0f, -0.0f})
        x.push_back(v);
    const auto r = k::test::random_floats(1001, 53, 4.0f);   // values between the f16 ones
    x.insert(x.end(), r.begin(), r.end());
    std::vector<float> want(x.size());
    k::gelu(x.data(), want.data(), x.size());
    auto xb = upload(*dev, x);
    auto yb = zeros(*dev, x.size() * sizeof(float));
    kc::gelu(xb, yb, static_cast<int64_t>(x.size()));
    const auto got = download<float>(*dev, yb, x.size());
    // tanhf is not the CPU's to the last bit: a result that close to an f16 rounding boundary
    // lands one f16 step away (2^-10 of its size, 2^-24 among the subnormals); the rest agree.
    // Over 64,501 inputs (odd: every finite f16, the cut-offs, values between).
    size_t off = 0, beyond = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        if (got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))) continue;
        ++off;
        const double step = std::max(std::fabs(double(want[i])) / 1024.0, std::ldexp(1.0, -24));
        if (std::fabs(double(got[i]) - want[i]) > step) {
            ++beyond;
            UNSCOPED_INFO("x " << x[i] << " got " << got[i] << " want " << want[i]);
        }
    }
    std::printf("cuda gelu over %zu inputs: %zu one f16 step from the CPU's\n", x.size(), off);
    CHECK(beyond == 0);
    CHECK(off < x.size() / 200);
}

TEST_CASE("cuda moe_route: softmax top-k, ties to the lower id, renormalised, against moe.cpp's router",
          "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    const int64_t n_tokens = GENERATE(1, 7, 130);
    const int64_t n_expert = GENERATE(8, 37, 128);
    const int64_t n_used = GENERATE(1, 3, 8);
    auto logits = k::test::random_floats(n_tokens * n_expert, 61, 2.0f);
    // Exact ties: token 0 has every logit equal (the picks are 0..n_used-1); token 1, if any,
    // repeats its best logit at a higher id.
    std::fill(logits.begin(), logits.begin() + n_expert, 0.5f);
    if (n_tokens > 1) {
        float * l1 = logits.data() + n_expert;
        const auto best = std::max_element(l1, l1 + n_expert) - l1;
        l1[n_expert - 1] = l1[best];
        l1[n_expert / 2] = l1[best];
    }
    std::vector<float> probs, want_w;
    std::vector<int32_t> want_ids;
    route_cpu(logits, n_tokens, n_expert, n_used, probs, want_ids, want_w);

    auto lb = upload(*dev, logits);
    auto ib = zeros(*dev, want_ids.size() * sizeof(int32_t));
    auto wb = zeros(*dev, want_w.size() * sizeof(float));
    kc::moe_route(lb, ib, wb, n_tokens, n_expert, n_used);
    const auto ids = download<int32_t>(*dev, ib, want_ids.size());
    const auto w = download<float>(*dev, wb, want_w.size());
    INFO("tokens " << n_tokens << " experts " << n_expert << " used " << n_used);
    // The device's expf is within 2 ulp of the CPU's exp: a pick may differ only where the CPU's
    // probabilities of the two experts are that close; such a token's weights are not compared.
    double worst = 0;
    size_t parted = 0, unexplained = 0;
    for (int64_t t = 0; t < n_tokens; ++t) {
        bool same = true;
        for (int64_t j = 0; j < n_used; ++j) {
            const int32_t a = ids[t * n_used + j], b = want_ids[t * n_used + j];
            if (a == b) continue;
            same = false;
            const bool valid = a >= 0 && a < n_expert;
            if (!valid || std::fabs(double(probs[t * n_expert + a]) - probs[t * n_expert + b]) >
                              4e-6 * probs[t * n_expert + b])
                ++unexplained;
        }
        if (!same) {
            ++parted;
            continue;
        }
        for (int64_t j = 0; j < n_used; ++j)
            worst = std::max(worst, std::fabs(double(w[t * n_used + j]) - want_w[t * n_used + j]) /
                                        std::max(1e-30, double(want_w[t * n_used + j])));
    }
    for (int64_t j = 0; j < n_used; ++j) CHECK(ids[j] == j);   // all tied: the lowest ids, in order
    std::printf("cuda moe_route tokens %lld experts %lld used %lld: %zu tokens picked otherwise (near ties), weights "
                "max relative difference %.3g\n",
                (long long)n_tokens, (long long)n_expert, (long long)n_used, parted, worst);
    CHECK(unexplained == 0);
    CHECK(parted <= static_cast<size_t>(n_tokens) / 50);
    CHECK(worst < 2e-6);
}

TEST_CASE("cuda matmul_experts: each pick's product is its expert's matmul, per token and per pick activations",
          "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    const int64_t n_tokens = GENERATE(1, 7, 33);
    const bool x_per_pick = GENERATE(false, true);
    const int64_t n_expert = 5, n_used = 3, expert_rows = 67;
    const int64_t n_pairs = n_tokens * n_used;
    k::thread_pool pool(1);
    k::matmul_context ctx;
    // Picks as a router makes them (distinct per token) and a token that picks one expert twice.
    std::vector<int32_t> ids(static_cast<size_t>(n_pairs));
    std::mt19937 rng(71);
    for (int64_t t = 0; t < n_tokens; ++t) {
        std::vector<int32_t> e(static_cast<size_t>(n_expert));
        std::iota(e.begin(), e.end(), 0);
        std::shuffle(e.begin(), e.end(), rng);
        std::copy(e.begin(), e.begin() + n_used, ids.begin() + t * n_used);
    }
    ids[static_cast<size_t>(n_pairs - 1)] = ids[static_cast<size_t>(n_pairs - n_used)];
    auto idb = upload(*dev, ids);
    for (const int64_t n_cols : {int64_t{172}, int64_t{256}, int64_t{1280}})
        for (const tensor_type t : k_weight_types) {
            const bool q8 = kc::takes_q8_0_activations(t);
            if (n_cols % k::tensor_type_info(t).block_size != 0) continue;
            INFO("type " << k::tensor_type_info(t).name << " tokens " << n_tokens << " cols " << n_cols << " per pick "
                         << x_per_pick);
            const size_t row_bytes = k::row_size(t, n_cols);
            std::vector<uint8_t> m;
            for (int64_t r = 0; r < n_expert * expert_rows; ++r) {
                const auto row = k::test::random_weight_row(t, n_cols, 123 + static_cast<uint32_t>(r));
                m.insert(m.end(), row.begin(), row.end());
            }
            const int64_t x_rows = x_per_pick ? n_pairs : n_tokens;
            const auto x = k::test::random_floats(x_rows * n_cols, 72);
            auto wbuf = upload(*dev, m);
            auto xb = upload(*dev, x);
            auto xq = zeros(*dev, kc::q8_0_activation_bytes(x_rows, n_cols));
            if (q8) kc::quantize_q8_0(xb, xq, x_rows, n_cols);
            auto yb = zeros(*dev, static_cast<size_t>(n_pairs * expert_rows) * sizeof(float));
            const kc::weight_buffer wv{&wbuf, t, n_expert * expert_rows, n_cols, row_bytes};
            kc::matmul_experts(wv, expert_rows, xb, x_per_pick, idb, yb, n_tokens, n_used, q8 ? &xq : nullptr);
            const auto got = download<float>(*dev, yb, static_cast<size_t>(n_pairs * expert_rows));

            // Against the CPU: kernels::matmul over the pick's expert rows and its activation row,
            // relative to sum|w x| as the matmul test.
            double worst = 0;
            std::vector<float> cpu(static_cast<size_t>(expert_rows)), wdeq(static_cast<size_t>(n_cols));
            for (int64_t pr = 0; pr < n_pairs; ++pr) {
                const int64_t e = ids[pr], xr = x_per_pick ? pr : pr / n_used;
                const uint8_t * we = m.data() + static_cast<size_t>(e * expert_rows) * row_bytes;
                k::matmul({t, we, expert_rows, n_cols, row_bytes}, x.data() + xr * n_cols, 1, cpu.data(), pool, ctx);
                for (int64_t r = 0; r < expert_rows; ++r) {
                    k::dequantize_row(t, we + r * row_bytes, wdeq.data(), n_cols);
                    double abs_sum = 0;
                    for (int64_t c = 0; c < n_cols; ++c) abs_sum += std::fabs(double(wdeq[c]) * x[xr * n_cols + c]);
                    worst = std::max(worst, std::fabs(double(got[pr * expert_rows + r]) - cpu[r]) / (abs_sum + 1e-30));
                }
            }
            std::printf("cuda matmul_experts %s tokens %lld cols %lld per pick %d: max difference %.3g (relative to "
                        "sum|w x|)\n",
                        std::string(k::tensor_type_info(t).name).c_str(), (long long)n_tokens, (long long)n_cols,
                        x_per_pick, worst);
            CHECK(worst < 1e-5);

            // Against the device's own matmul of each expert's rows: the same kernel, bit for bit.
            size_t mismatches = 0;
            for (int64_t e = 0; e < n_expert; ++e) {
                const std::vector<uint8_t> rows(m.begin() + e * expert_rows * static_cast<int64_t>(row_bytes),
                                                m.begin() + (e + 1) * expert_rows * static_cast<int64_t>(row_bytes));
                auto eb = upload(*dev, rows);
                auto ye = zeros(*dev, static_cast<size_t>(x_rows * expert_rows) * sizeof(float));
                kc::matmul({&eb, t, expert_rows, n_cols, row_bytes}, xb, ye, x_rows, q8 ? &xq : nullptr);
                const auto plain = download<float>(*dev, ye, static_cast<size_t>(x_rows * expert_rows));
                for (int64_t pr = 0; pr < n_pairs; ++pr) {
                    if (ids[pr] != e) continue;
                    const int64_t xr = x_per_pick ? pr : pr / n_used;
                    for (int64_t r = 0; r < expert_rows; ++r)
                        mismatches += got[pr * expert_rows + r] != plain[xr * expert_rows + r];
                }
            }
            CHECK(mismatches == 0);
        }
}

TEST_CASE("cuda moe_combine: the picks' weighted outputs summed in pick order, bit for bit", "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    const int64_t n_tokens = GENERATE(1, 7, 130);
    const int64_t n_used = GENERATE(1, 3, 8);
    const int64_t n = 173;
    const auto x = k::test::random_floats(n_tokens * n_used * n, 81);
    const auto w = k::test::random_floats(n_tokens * n_used, 82);
    // moe.cpp: each slot is x * w, the first copied, each further one added.
    std::vector<float> want(static_cast<size_t>(n_tokens * n));
    for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t i = 0; i < n; ++i) {
            float o = x[(t * n_used) * n + i] * w[t * n_used];
            for (int64_t j = 1; j < n_used; ++j) o = o + x[(t * n_used + j) * n + i] * w[t * n_used + j];
            want[t * n + i] = o;
        }
    auto xb = upload(*dev, x), wb = upload(*dev, w);
    auto yb = zeros(*dev, want.size() * sizeof(float));
    kc::moe_combine(xb, wb, yb, n_tokens, n_used, n);
    INFO("tokens " << n_tokens << " used " << n_used);
    CHECK(download<float>(*dev, yb, want.size()) == want);
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
