// prefill's reuse against a cold evaluation on the tiny real model: prefix reuse must give
// bitwise the same logits and greedy tokens; chunk reuse moves K/V rows whose layer-0 keys
// and values depend only on token and position, so those rows must equal a cold pass's.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string_view>

#include "inference/forward/engine.h"
#include "tests/inference/tiny_engine.h"
#include "inference/gguf/gguf_file.h"
#include "inference/cache/kv_shift.h"
#include "inference/model/model.h"
#include "inference/decode/sampler.h"
#include "inference/session/sequence.h"
#include "kernels/ops.h"
#include "kernels/quant.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;

namespace {

std::vector<token_id> greedy(engine & eng, sequence seq, std::vector<float> logits, int n) {
    std::vector<token_id> out;
    for (int i = 0; i < n; ++i) {
        out.push_back(sampler::argmax(logits));
        REQUIRE(decode_one(eng, seq, out.back(), logits).has_value());
    }
    return out;
}

struct edit {
    const char * name;
    size_t at, n_remove, n_insert;
};

}  // namespace

TEST_CASE("prefix reuse gives bitwise the logits and greedy tokens of a cold evaluation", "[inference][sequence]") {
    auto & t = tiny_model(64);
    const auto type = GENERATE(kernels::tensor_type::f32, kernels::tensor_type::f16);
    const edit e = GENERATE(edit{"first token", 0, 1, 1}, edit{"near the top", 5, 0, 3}, edit{"middle", 150, 2, 1},
                            edit{"batch edge", 64, 1, 4}, edit{"last token", 299, 1, 1}, edit{"append", 300, 0, 7},
                            edit{"delete tail", 250, 50, 0});
    INFO("cache " << kernels::tensor_type_info(type).name << ", edit at " << e.name);
    const int32_t n_vocab = t.mdl.hp().n_vocab;
    const auto before = random_tokens(300, 7, n_vocab);
    auto after = before;
    after.erase(after.begin() + static_cast<long>(e.at), after.begin() + static_cast<long>(e.at + e.n_remove));
    const auto ins = random_tokens(e.n_insert, 11, n_vocab);
    after.insert(after.begin() + static_cast<long>(e.at), ins.begin(), ins.end());

    sequence warm(t.eng->make_cache(type, 512));
    std::vector<float> logits;
    REQUIRE(prefill(*t.eng, warm, before, logits).has_value());
    (void)greedy(*t.eng, warm, logits, 4);  // a copy decodes, as a completion leaves tokens behind
    REQUIRE(decode_one(*t.eng, warm, 5, logits).has_value());
    auto st = prefill(*t.eng, warm, after, logits);
    REQUIRE(st.has_value());
    CHECK(st->n_reused == static_cast<int32_t>(std::min(e.at, after.size() - 2)));   // at least two evaluated
    CHECK(st->n_reused + st->n_evaluated == static_cast<int32_t>(after.size()));
    CHECK(warm.tokens == after);
    CHECK(warm.cache.n_pos() == static_cast<int32_t>(after.size()));

    sequence cold(t.eng->make_cache(type, 512));
    std::vector<float> cold_logits;
    auto cs = prefill(*t.eng, cold, after, cold_logits, /*reuse=*/false);
    REQUIRE(cs.has_value());
    CHECK(cs->n_evaluated == static_cast<int32_t>(after.size()));
    REQUIRE(logits.size() == cold_logits.size());
    CHECK(std::memcmp(logits.data(), cold_logits.data(), logits.size() * sizeof(float)) == 0);
    CHECK(greedy(*t.eng, warm, logits, 12) == greedy(*t.eng, cold, cold_logits, 12));
}

TEST_CASE("prefill with reuse off evaluates everything; an unchanged prompt re-evaluates its last two tokens",
          "[inference][sequence]") {
    auto & t = tiny_model(64);
    const auto p = random_tokens(100, 3, t.mdl.hp().n_vocab);
    sequence seq(t.eng->make_cache(kernels::tensor_type::f32, 512));
    std::vector<float> a, b;
    REQUIRE(prefill(*t.eng, seq, p, a).has_value());
    auto again = prefill(*t.eng, seq, p, b);
    REQUIRE(again.has_value());
    CHECK(again->n_reused == 98);
    CHECK(again->n_evaluated == 2);
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    auto cold = prefill(*t.eng, seq, p, b, /*reuse=*/false);
    REQUIRE(cold.has_value());
    CHECK(cold->n_reused == 0);
    CHECK(cold->n_evaluated == 100);
    CHECK(seq.n_batch_rows == 100);
}

TEST_CASE("prefill re-evaluates positions that decode steps computed", "[inference][sequence]") {
    // A decode step sums attention in llama.cpp's one-token order; a cold evaluation of the
    // same text would not, so those positions are not kept.
    auto & t = tiny_model(64);
    const auto p = random_tokens(50, 5, t.mdl.hp().n_vocab);
    sequence seq(t.eng->make_cache(kernels::tensor_type::f32, 512));
    std::vector<float> logits;
    REQUIRE(prefill(*t.eng, seq, p, logits).has_value());
    auto longer = p;
    for (int i = 0; i < 6; ++i) {
        longer.push_back(sampler::argmax(logits));
        REQUIRE(decode_one(*t.eng, seq, longer.back(), logits).has_value());
    }
    CHECK(seq.n_batch_rows == 50);
    longer.push_back(7);
    auto st = prefill(*t.eng, seq, longer, logits);
    REQUIRE(st.has_value());
    CHECK(st->n_reused == 50);
    CHECK(st->n_evaluated == 7);
    CHECK(seq.n_batch_rows == 57);
}

TEST_CASE("eval never leaves a lone token in a batch of its own", "[inference][engine]") {
    // 65 tokens with a batch of 64: 63 + 2, not 64 + 1 (a lone token sums in the one-token
    // order). Observed through the engine's observer: the batch sizes it reports.
    auto & t = tiny_model(64);
    const auto p = random_tokens(65, 9, t.mdl.hp().n_vocab);
    std::vector<int32_t> sizes;
    t.eng->set_observer([&](std::string_view name, int32_t layer, float *, int32_t n_rows, int32_t) {
        if (layer == 0 && name == "attn_norm") sizes.push_back(n_rows);
    });
    sequence seq(t.eng->make_cache(kernels::tensor_type::f32, 512));
    std::vector<float> logits;
    REQUIRE(prefill(*t.eng, seq, p, logits).has_value());
    t.eng->set_observer({});
    CHECK(sizes == std::vector<int32_t>{63, 2});
}

TEST_CASE("prefill refuses an empty prompt, one longer than the context, and a token outside the vocabulary",
          "[inference][sequence]") {
    auto & t = tiny_model(64);
    sequence seq(t.eng->make_cache(kernels::tensor_type::f32, 64));
    std::vector<float> logits;
    CHECK_THAT(prefill(*t.eng, seq, std::vector<token_id>{}, logits).message(), Catch::Contains("empty"));
    CHECK_THAT(prefill(*t.eng, seq, std::vector<token_id>(65, 5), logits).message(), Catch::Contains("more than the context of 64"));
    const std::vector<token_id> bad{5, 6, t.mdl.hp().n_vocab};
    CHECK_THAT(prefill(*t.eng, seq, bad, logits).message(), Catch::Contains("outside the vocabulary"));
    CHECK(seq.cache.n_pos() == static_cast<int32_t>(seq.tokens.size()));
}

TEST_CASE("find_chunks finds moved runs in order and never the last prompt token", "[inference][sequence]") {
    std::vector<token_id> old_t(200);
    for (size_t i = 0; i < old_t.size(); ++i) old_t[i] = static_cast<token_id>(1000 + i);
    // New: prefix [0,50), 5 new tokens, old [60,120) (moved right by... 50+5-60 = -5), 3 new, old [120,200)
    std::vector<token_id> p(old_t.begin(), old_t.begin() + 50);
    for (int i = 0; i < 5; ++i) p.push_back(7);
    p.insert(p.end(), old_t.begin() + 60, old_t.begin() + 120);
    for (int i = 0; i < 3; ++i) p.push_back(8);
    p.insert(p.end(), old_t.begin() + 120, old_t.end());
    const auto c = find_chunks(old_t, p, 50, 16);
    REQUIRE(c.size() == 2);
    CHECK(c[0].src == 60);
    CHECK(c[0].dst == 55);
    CHECK(c[0].n == 60);
    CHECK(c[1].src == 120);
    CHECK(c[1].dst == 118);
    CHECK(c[1].n == 79);  // stops before the last prompt token
    CHECK(find_chunks(old_t, p, 50, 100).empty());  // shorter than the minimum
    // Bounded by `end` (a FIM prompt's cursor): no run reaches past it.
    const auto bounded = find_chunks(old_t, p, 50, 16, 120);
    REQUIRE(bounded.size() == 1);
    CHECK(bounded[0].dst + bounded[0].n <= 120);
    CHECK(find_chunks(old_t, p, 50, 16, 60).empty());
    CHECK(find_chunks(old_t, p, 50, 0).empty());    // off
}

TEST_CASE("chunk reuse moves rows to where a cold pass puts them (layer 0 depends on token and position only)",
          "[inference][sequence][kv_shift]") {
    auto & t = tiny_model(64);
    const auto type = GENERATE(kernels::tensor_type::f32, kernels::tensor_type::f16);
    INFO("cache " << kernels::tensor_type_info(type).name);
    const int32_t n_vocab = t.mdl.hp().n_vocab;
    const auto before = random_tokens(400, 21, n_vocab);
    // Edit 1 near the top inserts 9 tokens (the next chunk moves right); edit 2 further down
    // deletes 20 (the chunk after it moves left, net -11).
    auto after = before;
    after.erase(after.begin() + 250, after.begin() + 270);
    const auto ins = random_tokens(9, 5, n_vocab);
    after.insert(after.begin() + 40, ins.begin(), ins.end());

    sequence warm(t.eng->make_cache(type, 512));
    std::vector<float> logits;
    REQUIRE(prefill(*t.eng, warm, before, logits).has_value());
    auto st = prefill(*t.eng, warm, after, logits, prefill_options{true, 32, {}});
    REQUIRE(st.has_value());
    CHECK(st->n_chunks == 2);
    CHECK(st->n_shifted == static_cast<int32_t>(after.size()) - 40 - 9 - 1);
    CHECK(st->n_evaluated == 10);  // the 9 inserted tokens and the last one
    CHECK(warm.tokens == after);

    sequence cold(t.eng->make_cache(type, 512));
    std::vector<float> cold_logits;
    REQUIRE(prefill(*t.eng, cold, after, cold_logits, /*reuse=*/false).has_value());
    const int32_t width = t.mdl.hp().n_embd_kv();
    std::vector<float> a(width), b(width);
    float worst_k = 0;
    for (int32_t p = 0; p < static_cast<int32_t>(after.size()); ++p) {
        CHECK(std::memcmp(warm.cache.v_row(0, p), cold.cache.v_row(0, p), warm.cache.row_bytes(kv_half::v)) == 0);
        kernels::dequantize_row(type, warm.cache.k_row(0, p), a.data(), width);
        kernels::dequantize_row(type, cold.cache.k_row(0, p), b.data(), width);
        for (int32_t i = 0; i < width; ++i) worst_k = std::max(worst_k, std::fabs(a[i] - b[i]) / (1.0f + std::fabs(b[i])));
    }
    // A rotation by delta after one by pos differs from one by pos + delta by float rounding
    // of the angles (about pos * ulp(1) rad at 400 positions); f16 storage adds its half-ulp twice.
    CHECK(worst_k <= (type == kernels::tensor_type::f32 ? 5e-5f : 2e-3f));
    // The logits are those of a different context (the chunks kept their old one), close not equal:
    // measured 0.31 (f32 and f16 caches). Bounded at 0.5: the checks above see layer 0 only, and
    // the later layers' rows re-rotated by a wrong delta (twice the shift) move the logits by 2.36.
    float worst_logit = 0;
    for (size_t i = 0; i < logits.size(); ++i) worst_logit = std::max(worst_logit, std::fabs(logits[i] - cold_logits[i]));
    WARN("chunk reuse, " << kernels::tensor_type_info(type).name << ": max |dlogit| vs cold " << worst_logit);
    CHECK(worst_logit < 0.5f);
}

TEST_CASE("kv_shift on a q8_0/q4_0 cache: dequantize, rotate, requantize K; V moved as it is", "[inference][kv_shift]") {
    using kernels::tensor_type;
    // V of K's type, and of another (rows of another size).
    const auto types = GENERATE(kv_types(tensor_type::q8_0), kv_types(tensor_type::q4_0), kv_types(tensor_type::q8_0, tensor_type::f16),
                                kv_types(tensor_type::q4_0, tensor_type::q8_0));
    const tensor_type type = types.k;
    hparams hp;
    hp.n_layer = 2;
    hp.n_head = 4;
    hp.n_head_kv = 2;
    hp.head_dim = 64;
    hp.n_rot = 64;
    hp.rope_freq_base = 1e6f;
    hp.rope = rope_kind::neox;
    const int32_t width = hp.n_embd_kv();
    const kernels::rope_params rope{hp.n_rot, hp.rope_freq_base, 1.0f, kernels::rope_mode::neox};
    std::mt19937 rng(9);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<std::vector<float>> raw(300, std::vector<float>(width));
    for (auto & r : raw) for (auto & x : r) x = d(rng);
    auto rotated = [&](int32_t tok, int32_t pos) {
        std::vector<float> x = raw[tok];
        kernels::rope(x.data(), 1, hp.n_head_kv, hp.head_dim, &pos, rope);
        return x;
    };
    kv_cache c(types, hp.n_layer, width, 512);
    c.reserve(300);
    for (int32_t il = 0; il < hp.n_layer; ++il)
        for (int32_t p = 0; p < 300; ++p) {
            kernels::quantize_row(type, rotated(p, p).data(), c.k_row(il, p), width);
            kernels::quantize_row(types.v, raw[p].data(), c.v_row(il, p), width);
        }
    c.set_n_pos(300);
    // [100, 150) moves right by 30 and [200, 260) left by 20: the overlapping right move has to
    // run last-to-first and the left one after it.
    const std::vector<kv_move> moves{{100, 130, 50}, {200, 180, 60}};
    REQUIRE(kv_shift(c, hp, moves).has_value());
    std::vector<float> got(width), want_q(width);
    std::vector<uint8_t> q(std::max(c.row_bytes(kv_half::k), c.row_bytes(kv_half::v)));
    float worst = 0, bound = 0;
    for (const auto & m : moves)
        for (int32_t i = 0; i < m.n; ++i)
            for (int32_t il = 0; il < hp.n_layer; ++il) {
                kernels::dequantize_row(type, c.k_row(il, m.dst + i), got.data(), width);
                const auto want = rotated(m.src + i, m.dst + i);
                kernels::quantize_row(type, want.data(), q.data(), width);
                kernels::dequantize_row(type, q.data(), want_q.data(), width);
                for (int32_t j = 0; j < width; ++j) {
                    worst = std::max(worst, std::fabs(got[j] - want[j]));
                    bound = std::max(bound, std::fabs(want_q[j] - want[j]));  // one quantization's error
                }
                kernels::quantize_row(types.v, raw[m.src + i].data(), q.data(), width);
                CHECK(std::memcmp(c.v_row(il, m.dst + i), q.data(), c.row_bytes(kv_half::v)) == 0);
            }
    INFO("worst |dk| " << worst << ", one quantization " << bound);
    CHECK(worst <= 2.5f * bound);  // quantized twice (before and after the rotation)
    const std::vector<kv_move> overlapping{{0, 10, 50}, {40, 70, 10}};
    CHECK_THAT(kv_shift(c, hp, overlapping).message(), Catch::Contains("overlaps"));
    const std::vector<kv_move> outside{{0, 500, 50}};
    CHECK_THAT(kv_shift(c, hp, outside).message(), Catch::Contains("outside"));
}
