// k_smoothing: the scales (powers of two, one per RoPE pair, from the K biases), the identity
// the smoothed cache rests on ((q * s) . (k / s) = q . k, to the bit), and the default model's
// greedy tokens with a smoothed q8_0 K, also after a chunk of the prompt moved (kv_shift).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "inference/cache/k_smoothing.h"
#include "kernels/attention.h"
#include "tests/default_model.h"
#include "tests/inference/golden_util.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;
using kernels::tensor_type;

TEST_CASE("k_smoothing: smoothed keys and scaled queries give the plain attention's bits", "[inference][k_smoothing]") {
    constexpr int64_t n_head = 4, n_head_kv = 2, D = 64, n_pos = 40, n_tok = 3;
    std::mt19937 rng(5);
    std::normal_distribution<float> d(0.0f, 3.0f);
    std::vector<float> q(n_tok * n_head * D), k(n_pos * n_head_kv * D), v(k.size());
    for (auto * x : {&q, &k, &v})
        for (float & e : *x) e = d(rng);
    std::vector<float> s(n_head_kv * D, 1.0f);
    for (int64_t c : {3, 17, 40, 64 + 5, 64 + 31}) s[c] = s[c % D < 32 ? c + 32 : c - 32] = std::exp2(static_cast<float>(c % 5 + 1));
    for (int64_t p = 0; p < n_pos; ++p) k[p * n_head_kv * D + 3] += 140.0f;   // an outlier channel, as Qwen2's biases make

    kernels::thread_pool pool(2);
    const int32_t n_kv[n_tok] = {n_pos - 2, n_pos - 1, n_pos};
    auto attend = [&](const std::vector<float> & qs, const std::vector<float> & ks) {
        std::vector<float> out(q.size());
        const kernels::kv_view kv{{tensor_type::f32, ks.data(), n_head_kv * D * sizeof(float)},
                                  {tensor_type::f32, v.data(), n_head_kv * D * sizeof(float)}};
        kernels::attention(qs.data(), n_tok, n_kv, kv, n_head, n_head_kv, D, 0.125f, out.data(), pool, nullptr, false);
        return out;
    };
    auto qs = q, ks = k;
    k_smoothing::divide_keys(ks.data(), s.data(), n_pos, n_head_kv * D);
    k_smoothing::multiply_queries(qs.data(), s.data(), n_tok, n_head, n_head_kv, D);
    // Head 3 reads KV head 1: its queries took that head's scales.
    CHECK(qs[2 * n_head * D + 3 * D + 5] == q[2 * n_head * D + 3 * D + 5] * s[D + 5]);
    CHECK(ks[3] * s[3] == k[3]);
    const auto plain = attend(q, k), smoothed = attend(qs, ks);
    CHECK(std::memcmp(plain.data(), smoothed.data(), plain.size() * sizeof(float)) == 0);
}

TEST_CASE("k_smoothing: the default model's scales", "[inference][k_smoothing][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(path);
    auto tm = load_test_model(path);
    const hparams & hp = tm.mdl.hp();
    const auto sm = k_smoothing::from_model(tm.mdl);
    REQUIRE_FALSE(sm.empty());
    REQUIRE(hp.rope == rope_kind::neox);
    REQUIRE(hp.n_rot == hp.head_dim);
    const int32_t half = hp.n_rot / 2;
    int n_layers = 0, n_scaled = 0;
    float largest = 1;
    for (int32_t il = 0; il < hp.n_layer; ++il) {
        const float * s = sm.scales(il);
        const float * b = tm.mdl.layers()[il].bk;
        if (!s) continue;
        ++n_layers;
        for (int32_t g = 0; g < hp.n_head_kv; ++g)
            for (int32_t i = 0; i < half; ++i) {
                const int32_t a = g * hp.head_dim + i, c = a + half;
                INFO("layer " << il << " channel " << a);
                CHECK(s[a] == s[c]);   // a RoPE pair shares its scale
                CHECK(s[a] == std::exp2(std::round(std::log2(s[a]))));
                const float r = std::hypot(b[a], b[c]);
                CHECK(r / s[a] <= k_smoothing::k_tau);
                CHECK((s[a] == 1.0f || r / s[a] > k_smoothing::k_tau / 2));
                n_scaled += s[a] > 1.0f;
                largest = std::max(largest, s[a]);
            }
    }
    WARN("default model: " << n_scaled << " pairs scaled in " << n_layers << " layers, largest scale " << largest);
    CHECK(sm.scales(0));    // the biases reach |145| in layer 0 and |211| in layer 8
    CHECK(sm.scales(8));
    CHECK(!sm.scales(5));   // none above 7 there
    CHECK(largest == 16.0f);
}

TEST_CASE("k_smoothing: a smoothed q8_0 K after a chunk move is as close to a cold pass as a plain one",
          "[inference][k_smoothing][kv_shift][default-model]") {
    // The scales are shared by each RoPE pair, so kv_shift's rotation of moved rows commutes
    // with them. The moved rows keep their old context, so no cache type gives the cold logits;
    // a quantized K also rounds them twice (before and after the rotation). Measured: f16 0.68,
    // q8_0 1.11, q8_0 smoothed 1.12.
    HEARTH_DEFAULT_MODEL_OR_SKIP(path);
    auto tm = load_test_model(path);
    kernels::thread_pool pool(2);
    engine eng(tm.mdl, pool, 512);
    const auto golden = read_json_file(std::string(HEARTH_SOURCE_DIR) +
                                       "/tests/golden/qwen2.5-coder-0.5b-instruct-q4_k_m/completions.json");
    const auto before = json_ids(golden.at("results").as_array()[0].at("prompt_tokens"));
    REQUIRE(before.size() > 300);
    auto after = before;   // 12 tokens inserted near the top: the rest moves right
    after.insert(after.begin() + 40, before.begin() + 100, before.begin() + 112);

    struct row {
        kv_types types;
        bool smooth;
        float moved_vs_cold = 0;
    };
    row rows[] = {{tensor_type::f16, false}, {kv_types(tensor_type::q8_0, tensor_type::f16), false},
                  {kv_types(tensor_type::q8_0, tensor_type::f16), true}};
    for (row & r : rows) {
        sequence warm(eng.make_cache(r.types, 1024, r.smooth));
        REQUIRE(warm.cache.k_smoothed() == r.smooth);
        std::vector<float> moved, cold;
        REQUIRE(prefill(eng, warm, before, moved).has_value());
        const auto st = prefill(eng, warm, after, moved, prefill_options{true, 32, {}});
        REQUIRE(st.has_value());
        CHECK(st->n_shifted > 200);
        sequence fresh(eng.make_cache(r.types, 1024, r.smooth));
        REQUIRE(prefill(eng, fresh, after, cold, /*reuse=*/false).has_value());
        for (size_t i = 0; i < cold.size(); ++i) r.moved_vs_cold = std::max(r.moved_vs_cold, std::fabs(moved[i] - cold[i]));
        WARN(kv_types_name(r.types) << (r.smooth ? " smoothed" : "") << ": max |dlogit| of the moved rows against a cold pass "
                                    << r.moved_vs_cold);
    }
    CHECK(rows[2].moved_vs_cold <= 1.25f * rows[1].moved_vs_cold);
    CHECK(rows[2].moved_vs_cold <= 2.0f * rows[0].moved_vs_cold);
}
