// The KV cache on the device, f16, q8_0 and q4_0, K and V apart: kv_append against quantize_row
// (bit for bit) and attention against kernels::attention over the same cache, causal and with a
// sliding window.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attention.h"
#include "kernels/quant.h"
#include "kernels/thread_pool.h"
#include "kernels/vulkan/ops.h"
#include "tests/kernels/quant_test_util.h"
#include "tests/kernels/vulkan/vulkan_test_device.h"

namespace k = hearth::kernels;
namespace kv = hearth::kernels::vulkan;
using k::tensor_type;

TEST_CASE("vulkan kv_append writes f16, q8_0 and q4_0 rows as quantize_row does, and nothing else", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const tensor_type type = GENERATE(tensor_type::f16, tensor_type::q8_0, tensor_type::q4_0);
    const int64_t n_tokens = GENERATE(1, 7, 512);
    const int64_t n_embd_kv = GENERATE(2, 64, 130, 256);
    // Quantized rows are pairs of whole blocks; anything else is refused, f32 always.
    CHECK_FALSE(kv::supports_cache(tensor_type::f32, n_embd_kv));
    if (type != tensor_type::f16) CHECK_FALSE(kv::supports_cache(type, 32));
    if (!kv::supports_cache(type, n_embd_kv)) return;
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
    for (auto & td : kv::test::test_devices()) {
        INFO(k::tensor_type_info(type).name << " tokens " << n_tokens << " n_embd_kv " << n_embd_kv << " " << td.label);
        auto sb = kv::test::upload(*td.dev, src);
        auto cache = kv::test::upload(*td.dev, std::vector<uint8_t>(want.size(), 0xCD));
        auto s = kv::test::new_stream(*td.dev);
        kv::kv_append(s, type, sb, cache, first_pos, n_tokens, n_embd_kv);
        kv::test::run(s);
        CHECK(kv::test::download<uint8_t>(cache, want.size()) == want);
        kv::test::require_validation_silent(td);
    }
}

namespace {

struct attention_case {
    int64_t n_tokens, n_past, n_head, n_head_kv, head_dim;
    int32_t window;   // 0: none
};

}  // namespace

TEST_CASE("vulkan attention over f16, q8_0 and q4_0 caches, K and V apart, matches the CPU", "[kernels][vulkan]") {
    if (!kv::test::have_device()) return;
    const auto [k_type, v_type] = GENERATE(std::pair{tensor_type::f16, tensor_type::f16}, std::pair{tensor_type::q8_0, tensor_type::q8_0},
                                           std::pair{tensor_type::q4_0, tensor_type::q4_0}, std::pair{tensor_type::f16, tensor_type::q8_0},
                                           std::pair{tensor_type::q8_0, tensor_type::f16}, std::pair{tensor_type::f16, tensor_type::q4_0});
    const attention_case c = GENERATE(attention_case{1, 40, 4, 2, 64, 0}, attention_case{7, 0, 4, 2, 64, 0},
                                      attention_case{7, 33, 4, 4, 64, 0}, attention_case{7, 33, 6, 2, 48, 0},
                                      attention_case{7, 100, 4, 2, 64, 16}, attention_case{1, 300, 2, 1, 48, 0},
                                      attention_case{512, 0, 2, 1, 64, 0});
    const int64_t n_ctx = c.n_past + c.n_tokens;
    const int64_t n_embd_kv = c.n_head_kv * c.head_dim;
    if (!kv::supports_cache(k_type, n_embd_kv) || !kv::supports_cache(v_type, n_embd_kv)) return;
    const size_t k_row_bytes = k::row_size(k_type, n_embd_kv), v_row_bytes = k::row_size(v_type, n_embd_kv);
    const auto kf = k::test::random_floats(n_ctx * n_embd_kv, 31);
    const auto vf = k::test::random_floats(n_ctx * n_embd_kv, 32);
    const auto q = k::test::random_floats(c.n_tokens * c.n_head * c.head_dim, 33);
    std::vector<uint8_t> kc(k_row_bytes * static_cast<size_t>(n_ctx)), vc(v_row_bytes * static_cast<size_t>(n_ctx));
    for (int64_t p = 0; p < n_ctx; ++p) {
        k::quantize_row(k_type, kf.data() + p * n_embd_kv, kc.data() + p * k_row_bytes, n_embd_kv);
        k::quantize_row(v_type, vf.data() + p * n_embd_kv, vc.data() + p * v_row_bytes, n_embd_kv);
    }
    std::vector<int32_t> n_kv(static_cast<size_t>(c.n_tokens)), kv_start(n_kv.size(), 0);
    for (int64_t t = 0; t < c.n_tokens; ++t) {
        n_kv[t] = static_cast<int32_t>(c.n_past + t + 1);
        if (c.window) kv_start[t] = std::max(0, n_kv[t] - c.window);
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    std::vector<float> want(q.size());
    k::thread_pool pool(1);
    const k::kv_view cache{{k_type, kc.data(), k_row_bytes}, {v_type, vc.data(), v_row_bytes}};
    k::attention(q.data(), c.n_tokens, n_kv.data(), cache, c.n_head, c.n_head_kv, c.head_dim, scale, want.data(), pool,
                 c.window ? kv_start.data() : nullptr);
    for (auto & td : kv::test::test_devices()) {
        INFO(k::tensor_type_info(k_type).name << "/" << k::tensor_type_info(v_type).name << " tokens " << c.n_tokens << " past " << c.n_past << " heads " << c.n_head << "/" << c.n_head_kv
                       << " head_dim " << c.head_dim << " window " << c.window << " " << td.label);
        // The cache is written on the device from the f32 rows, as a layer would write it.
        auto kfb = kv::test::upload(*td.dev, kf);
        auto vfb = kv::test::upload(*td.dev, vf);
        auto kb = kv::test::zeros(*td.dev, kc.size());
        auto vb = kv::test::zeros(*td.dev, vc.size());
        auto qb = kv::test::upload(*td.dev, q);
        auto nb = kv::test::upload(*td.dev, n_kv);
        auto sb = kv::test::upload(*td.dev, kv_start);
        auto scores = kv::test::zeros(*td.dev, static_cast<size_t>(c.n_tokens * c.n_head * n_ctx) * sizeof(float));
        auto out = kv::test::zeros(*td.dev, q.size() * sizeof(float));
        auto s = kv::test::new_stream(*td.dev);
        kv::kv_append(s, k_type, kfb, kb, 0, n_ctx, n_embd_kv);
        kv::kv_append(s, v_type, vfb, vb, 0, n_ctx, n_embd_kv);
        kv::attention(s, k_type, v_type, qb, kb, vb, nb, sb, scores, out,
                      {c.n_tokens, c.n_head, c.n_head_kv, c.head_dim, n_ctx, scale});
        kv::test::run(s);
        REQUIRE(kv::test::download<uint8_t>(kb, kc.size()) == kc);
        REQUIRE(kv::test::download<uint8_t>(vb, vc.size()) == vc);
        const auto got = kv::test::download<float>(out, q.size());
        // An f16 K and head_dim % 64 == 0: the CPU computes as llama.cpp does, its queries and
        // softmax weights rounded to f16 (relative 2^-11 each); otherwise all f32, as on the device.
        const bool f16_roundings = k_type == tensor_type::f16 && c.head_dim % 64 == 0;
        const double tol = f16_roundings ? 2e-3 : 2e-5;
        double worst = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            const double e = std::fabs(static_cast<double>(got[i]) - want[i]);
            worst = std::max(worst, e);
            if (!(e <= tol)) FAIL_CHECK("element " << i << ": " << got[i] << " vs " << want[i]);
        }
        kv::test::report("attention " + std::string(k::tensor_type_info(k_type).name) + "/" +
                             std::string(k::tensor_type_info(v_type).name) + " head_dim " + std::to_string(c.head_dim) +
                             " (absolute, values ~1)", td, worst, f16_roundings ? "2e-3" : "2e-5");
        kv::test::require_validation_silent(td);
    }
}
