// The KV cache on the CUDA device, f16, q8_0 and q4_0, K and V apart: kv_append against
// quantize_row (bit for bit) and attention against kernels::attention over the same cache, causal
// and with a sliding window, held to the tolerances docs/gpu.md states. Without a device each case
// is skipped with the reason.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attention.h"
#include "kernels/cuda/formats.h"
#include "kernels/cuda/ops.h"
#include "kernels/quant.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/cuda/cuda_test_device.h"
#include "tests/kernels/quant_test_util.h"

namespace k = hearth::kernels;
namespace kc = hearth::kernels::cuda;
using k::tensor_type;
using kc::test::download;
using kc::test::test_device;
using kc::test::upload;
using kc::test::zeros;

TEST_CASE("cuda formats: the cache types it declares are the ones it takes", "[kernels][cuda_formats]") {
    for (const tensor_type t : {tensor_type::f16, tensor_type::q8_0, tensor_type::q4_0}) {
        CHECK(kc::declares_cache(t));
        CHECK(kc::takes_cache(t, 64));
        CHECK(kc::takes_cache(t, 96));   // three blocks: each thread writes a whole block
    }
    CHECK_FALSE(kc::takes_cache(tensor_type::f32, 64));
    CHECK_FALSE(kc::takes_cache(tensor_type::q8_0, 130));
    CHECK_FALSE(kc::takes_cache(tensor_type::q4_0, 48));
    CHECK_FALSE(kc::takes_cache(tensor_type::f16, 3));
    for (const tensor_type t : {tensor_type::q4_k, tensor_type::q5_0, tensor_type::q6_k, tensor_type::q8_0,
                                tensor_type::q4_0, tensor_type::f16, tensor_type::f32})
        CHECK(kc::supports_weight(t));
    for (const tensor_type t : {tensor_type::q4_1, tensor_type::q5_k, tensor_type::q3_k, tensor_type::bf16})
        CHECK_FALSE(kc::supports_weight(t));
}

TEST_CASE("cuda kv_append writes f16, q8_0 and q4_0 rows as quantize_row does, and nothing else", "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    const tensor_type type = GENERATE(tensor_type::f16, tensor_type::q8_0, tensor_type::q4_0);
    const int64_t n_tokens = GENERATE(1, 7, 512);
    const int64_t n_embd_kv = GENERATE(2, 64, 96, 130, 256);
    if (!kc::takes_cache(type, n_embd_kv)) return;
    const int32_t first_pos = 5;
    const int64_t n_pos = first_pos + n_tokens + 3;
    const size_t row_bytes = k::row_size(type, n_embd_kv);
    auto src = k::test::random_floats(n_tokens * n_embd_kv, 21, 30.0f);
    src[0] = 65519.0f;   // rounds to the largest half
    if (src.size() > 1) src[1] = 1e-7f;   // a subnormal half
    // A block of zeros (d = 0), one led by -0.0, and one whose largest magnitude is negative.
    if (n_embd_kv >= 64) {
        std::fill(src.begin() + 32, src.begin() + 64, 0.0f);
        src[32] = -0.0f;
    }
    if (n_tokens > 1 && n_embd_kv >= 64) src[n_embd_kv + 3] = -400.0f;
    std::vector<uint8_t> want(row_bytes * static_cast<size_t>(n_pos), 0xCD);
    for (int64_t t = 0; t < n_tokens; ++t)
        k::quantize_row(type, src.data() + t * n_embd_kv, want.data() + (first_pos + t) * row_bytes, n_embd_kv);
    INFO(k::tensor_type_info(type).name << " tokens " << n_tokens << " n_embd_kv " << n_embd_kv);
    auto sb = upload(*dev, src);
    auto cache = upload(*dev, std::vector<uint8_t>(want.size(), 0xCD));
    kc::kv_append(type, sb, cache, first_pos, n_tokens, n_embd_kv);
    CHECK(download<uint8_t>(*dev, cache, want.size()) == want);
}

namespace {

struct attention_case {
    int64_t n_tokens, n_past, n_head, n_head_kv, head_dim;
    int32_t window;   // 0: none
};

}  // namespace

TEST_CASE("cuda attention over f16, q8_0 and q4_0 caches, K and V apart, matches the CPU", "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    const auto [k_type, v_type] = GENERATE(
        std::pair{tensor_type::f16, tensor_type::f16}, std::pair{tensor_type::q8_0, tensor_type::q8_0},
        std::pair{tensor_type::q4_0, tensor_type::q4_0}, std::pair{tensor_type::f16, tensor_type::q8_0},
        std::pair{tensor_type::q8_0, tensor_type::f16}, std::pair{tensor_type::f16, tensor_type::q4_0},
        std::pair{tensor_type::q4_0, tensor_type::q8_0}, std::pair{tensor_type::q8_0, tensor_type::q4_0});
    const attention_case c = GENERATE(attention_case{1, 40, 4, 2, 64, 0}, attention_case{7, 0, 4, 2, 64, 0},
                                      attention_case{7, 33, 4, 4, 64, 0}, attention_case{7, 33, 6, 2, 96, 0},
                                      attention_case{7, 100, 4, 2, 64, 16}, attention_case{1, 300, 2, 1, 128, 0},
                                      attention_case{13, 200, 14, 2, 64, 0}, attention_case{512, 0, 2, 1, 64, 0});
    const int64_t n_ctx = c.n_past + c.n_tokens;
    const int64_t n_embd_kv = c.n_head_kv * c.head_dim;
    REQUIRE(kc::takes_cache(k_type, n_embd_kv));
    REQUIRE(kc::takes_cache(v_type, n_embd_kv));
    const size_t k_row_bytes = k::row_size(k_type, n_embd_kv), v_row_bytes = k::row_size(v_type, n_embd_kv);
    const auto kf = k::test::random_floats(n_ctx * n_embd_kv, 31);
    const auto vf = k::test::random_floats(n_ctx * n_embd_kv, 32);
    const auto q = k::test::random_floats(c.n_tokens * c.n_head * c.head_dim, 33);
    std::vector<uint8_t> kc_rows(k_row_bytes * static_cast<size_t>(n_ctx)), vc_rows(v_row_bytes * static_cast<size_t>(n_ctx));
    for (int64_t p = 0; p < n_ctx; ++p) {
        k::quantize_row(k_type, kf.data() + p * n_embd_kv, kc_rows.data() + p * k_row_bytes, n_embd_kv);
        k::quantize_row(v_type, vf.data() + p * n_embd_kv, vc_rows.data() + p * v_row_bytes, n_embd_kv);
    }
    std::vector<int32_t> n_kv(static_cast<size_t>(c.n_tokens)), kv_start(n_kv.size(), 0);
    for (int64_t t = 0; t < c.n_tokens; ++t) {
        n_kv[t] = static_cast<int32_t>(c.n_past + t + 1);
        if (c.window) kv_start[t] = std::max(0, n_kv[t] - c.window);
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    std::vector<float> want(q.size());
    k::thread_pool pool(1);
    const k::kv_view cache{{k_type, kc_rows.data(), k_row_bytes}, {v_type, vc_rows.data(), v_row_bytes}};
    k::attention(q.data(), c.n_tokens, n_kv.data(), cache, c.n_head, c.n_head_kv, c.head_dim, scale, want.data(), pool,
                 c.window ? kv_start.data() : nullptr);
    INFO(k::tensor_type_info(k_type).name << "/" << k::tensor_type_info(v_type).name << " tokens " << c.n_tokens
                                          << " past " << c.n_past << " heads " << c.n_head << "/" << c.n_head_kv
                                          << " head_dim " << c.head_dim << " window " << c.window);
    // The cache is written on the device from the f32 rows, as a layer would write it.
    auto kfb = upload(*dev, kf), vfb = upload(*dev, vf), qb = upload(*dev, q);
    auto kb = zeros(*dev, kc_rows.size()), vb = zeros(*dev, vc_rows.size());
    auto nb = upload(*dev, n_kv), sb = upload(*dev, kv_start);
    auto scores = zeros(*dev, static_cast<size_t>(c.n_tokens * c.n_head * n_ctx) * sizeof(float));
    auto out = zeros(*dev, q.size() * sizeof(float));
    kc::kv_append(k_type, kfb, kb, 0, n_ctx, n_embd_kv);
    kc::kv_append(v_type, vfb, vb, 0, n_ctx, n_embd_kv);
    kc::attention(k_type, v_type, qb, kb, vb, nb, sb, scores, out,
                  {c.n_tokens, c.n_head, c.n_head_kv, c.head_dim, n_ctx, scale});
    REQUIRE(download<uint8_t>(*dev, kb, kc_rows.size()) == kc_rows);
    REQUIRE(download<uint8_t>(*dev, vb, vc_rows.size()) == vc_rows);
    const auto got = download<float>(*dev, out, q.size());
    // An f16 K and head_dim % 64 == 0: the CPU computes as llama.cpp does, its queries and softmax
    // weights rounded to f16 (relative 2^-11 each); otherwise all f32, as on the device.
    const bool f16_roundings = k_type == tensor_type::f16 && c.head_dim % 64 == 0;
    const double tol = f16_roundings ? 2e-3 : 2e-5;
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        const double e = std::fabs(static_cast<double>(got[i]) - want[i]);
        worst = std::max(worst, e);
        if (!(e <= tol)) FAIL_CHECK("element " << i << ": " << got[i] << " vs " << want[i]);
    }
    std::printf("cuda attention %s/%s tokens %lld past %lld head_dim %lld window %d: max difference %.3g (absolute, "
                "values ~1; bound %s)\n",
                std::string(k::tensor_type_info(k_type).name).c_str(), std::string(k::tensor_type_info(v_type).name).c_str(),
                (long long)c.n_tokens, (long long)c.n_past, (long long)c.head_dim, c.window, worst,
                f16_roundings ? "2e-3" : "2e-5");
}

TEST_CASE("cuda attention: a token that sees no position gets zeros", "[kernels][cuda]") {
    kc::device * dev = test_device();
    if (!dev) return;
    const tensor_type type = GENERATE(tensor_type::f16, tensor_type::q8_0, tensor_type::q4_0);
    const int64_t n_head = 2, head_dim = 64, n_ctx = 8;
    const auto kf = k::test::random_floats(n_ctx * head_dim, 41);
    const auto q = k::test::random_floats(2 * n_head * head_dim, 42);
    auto kfb = upload(*dev, kf), qb = upload(*dev, q);
    auto kb = zeros(*dev, k::row_size(type, head_dim) * n_ctx);
    kc::kv_append(type, kfb, kb, 0, n_ctx, head_dim);
    auto nb = upload(*dev, std::vector<int32_t>{0, 5}), sb = upload(*dev, std::vector<int32_t>{0, 5});
    auto scores = zeros(*dev, static_cast<size_t>(2 * n_head * n_ctx) * sizeof(float));
    auto out = upload(*dev, std::vector<float>(q.size(), 7.0f));
    kc::attention(type, type, qb, kb, kb, nb, sb, scores, out, {2, n_head, 1, head_dim, n_ctx, 0.125f});
    CHECK(download<float>(*dev, out, q.size()) == std::vector<float>(q.size(), 0.0f));
}
