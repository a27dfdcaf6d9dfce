#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/attention.h"
#include "kernels/ops_simd.h"
#include "kernels/quant.h"

namespace k = hearth::kernels;
using k::tensor_type;

namespace {

struct cache_fixture {
    tensor_type k_type, v_type;
    int64_t n_ctx, n_head_kv, head_dim;
    size_t k_row_bytes, v_row_bytes;
    std::vector<uint8_t> k, v;          // [n_ctx] rows of k_row_bytes / v_row_bytes
    std::vector<float> k_deq, v_deq;    // [n_ctx][n_head_kv * head_dim], as the cache decodes
};

// A cache of K in k_type and V in v_type filled from random floats through quantize_row, with
// `pad` spare bytes per row.
cache_fixture make_cache(tensor_type k_type, tensor_type v_type, int64_t n_ctx, int64_t n_head_kv, int64_t head_dim,
                         uint32_t seed, size_t pad = 0) {
    cache_fixture c{k_type, v_type, n_ctx, n_head_kv, head_dim, 0, 0, {}, {}, {}, {}};
    const int64_t width = n_head_kv * head_dim;
    c.k_row_bytes = k::row_size(k_type, width) + pad;
    c.v_row_bytes = k::row_size(v_type, width) + pad;
    c.k.assign(c.k_row_bytes * static_cast<size_t>(n_ctx), 0xCD);
    c.v.assign(c.v_row_bytes * static_cast<size_t>(n_ctx), 0xCD);
    c.k_deq.resize(static_cast<size_t>(n_ctx * width));
    c.v_deq.resize(static_cast<size_t>(n_ctx * width));
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> row(static_cast<size_t>(width));
    for (int64_t p = 0; p < n_ctx; ++p) {
        for (int which = 0; which < 2; ++which) {
            for (auto & x : row) x = nd(rng);
            const tensor_type type = which == 0 ? k_type : v_type;
            const size_t row_bytes = which == 0 ? c.k_row_bytes : c.v_row_bytes;
            auto & bytes = which == 0 ? c.k : c.v;
            auto & deq = which == 0 ? c.k_deq : c.v_deq;
            k::quantize_row(type, row.data(), bytes.data() + static_cast<size_t>(p) * row_bytes, width);
            k::dequantize_row(type, bytes.data() + static_cast<size_t>(p) * row_bytes, deq.data() + p * width, width);
        }
    }
    return c;
}

// K and V of one type.
cache_fixture make_cache(tensor_type type, int64_t n_ctx, int64_t n_head_kv, int64_t head_dim, uint32_t seed,
                         size_t pad = 0) {
    return make_cache(type, type, n_ctx, n_head_kv, head_dim, seed, pad);
}

k::kv_view view(const cache_fixture & c) {
    return {{c.k_type, c.k.data(), c.k_row_bytes}, {c.v_type, c.v.data(), c.v_row_bytes}};
}

std::vector<float> random_q(int64_t n_tokens, int64_t n_head, int64_t head_dim, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> q(static_cast<size_t>(n_tokens * n_head * head_dim));
    for (auto & x : q) x = nd(rng);
    return q;
}

float round_f16(float x) {
    uint16_t h;
    k::quantize_row(tensor_type::f16, &x, &h, 1);
    k::dequantize_row(tensor_type::f16, &h, &x, 1);
    return x;
}

// Straightforward attention in double over the dequantized cache. An f16 K with head_dim a
// multiple of 64 follows llama.cpp (attention.h): the queries and the softmax weights are
// rounded to f16 on the way, and so they are here.
// kv_start (empty: 0) is each token's first visible position, for a sliding window.
std::vector<double> reference(const cache_fixture & c, const std::vector<float> & q_in, int64_t n_tokens,
                              const std::vector<int32_t> & n_kv, int64_t n_head, float scale,
                              const std::vector<int32_t> & kv_start = {}) {
    const int64_t D = c.head_dim, width = c.n_head_kv * D, group = n_head / c.n_head_kv;
    const bool f16_roundings = c.k_type == tensor_type::f16 && D % 64 == 0;
    auto q = q_in;
    if (f16_roundings)
        for (auto & x : q) x = round_f16(x);
    std::vector<double> out(static_cast<size_t>(n_tokens * n_head * D), 0.0);
    for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t h = 0; h < n_head; ++h) {
            const int64_t g = h / group;
            const int64_t n = n_kv[static_cast<size_t>(t)];
            const int64_t p0 = kv_start.empty() ? 0 : kv_start[static_cast<size_t>(t)];
            if (n == 0) continue;
            std::vector<double> s(static_cast<size_t>(n), -INFINITY);
            double mx = -INFINITY;
            for (int64_t p = p0; p < n; ++p) {
                double d = 0;
                for (int64_t i = 0; i < D; ++i) d += double(q[(t * n_head + h) * D + i]) * c.k_deq[p * width + g * D + i];
                s[p] = d * scale;
                mx = std::max(mx, s[p]);
            }
            double sum = 0;
            for (auto & x : s) { x = std::exp(x - mx); sum += x; }
            for (int64_t p = p0; p < n; ++p) {
                const double w = f16_roundings ? round_f16(static_cast<float>(s[p] / sum)) : s[p] / sum;
                for (int64_t i = 0; i < D; ++i) out[(t * n_head + h) * D + i] += w * c.v_deq[p * width + g * D + i];
            }
        }
    return out;
}

std::vector<float> run_attention(const cache_fixture & c, const std::vector<float> & q, int64_t n_tokens,
                                 const std::vector<int32_t> & n_kv, int64_t n_head, float scale, int n_threads,
                                 const std::vector<int32_t> & kv_start = {}) {
    k::thread_pool pool(n_threads);
    std::vector<float> out(q.size(), std::nanf(""));
    const k::kv_view kv = view(c);
    k::attention(q.data(), n_tokens, n_kv.data(), kv, n_head, c.n_head_kv, c.head_dim, scale, out.data(), pool,
                 kv_start.empty() ? nullptr : kv_start.data());
    return out;
}

// Causal masks: token t of a batch that follows n_past cached positions sees n_past + t + 1.
std::vector<int32_t> causal(int64_t n_tokens, int32_t n_past) {
    std::vector<int32_t> n(static_cast<size_t>(n_tokens));
    for (int64_t t = 0; t < n_tokens; ++t) n[static_cast<size_t>(t)] = n_past + static_cast<int32_t>(t) + 1;
    return n;
}

// Float rounding; where the reference rounds the softmax weights to f16 as llama.cpp does, the
// kernel's weight (exp to within 2 ulp) can round to the neighbouring f16 value (2^-11 apart).
double tolerance(const cache_fixture & c) {
    return c.k_type == tensor_type::f16 && c.head_dim % 64 == 0 ? 2e-4 : 1e-5;
}

// got equals want[0, got.size()) bitwise, or (close) within float rounding.
void same_or_close(const float * want, const std::vector<float> & got, bool close) {
    if (!close) {
        REQUIRE(std::memcmp(want, got.data(), got.size() * sizeof(float)) == 0);
        return;
    }
    // The sums differ by float rounding, and so may the f16 rounding of a softmax weight.
    for (size_t i = 0; i < got.size(); ++i) REQUIRE(std::fabs(got[i] - want[i]) <= 2e-4f * (1.0f + std::fabs(want[i])));
}

}  // namespace

TEST_CASE("attention matches a double reference on the dequantized cache, every cache type and GQA ratio",
          "[kernels][attention]") {
    const tensor_type type = GENERATE(tensor_type::f32, tensor_type::f16, tensor_type::q8_0, tensor_type::q4_0);
    const int64_t group = GENERATE(1, 2, 7);
    const int64_t n_tokens = GENERATE(1, 5, 33);
    const int32_t n_past = GENERATE(0, 6, 300);
    const int64_t head_dim = 64, n_head_kv = 2, n_head = n_head_kv * group;
    INFO("type " << k::tensor_type_info(type).name << " group " << group << " n_tokens " << n_tokens << " n_past " << n_past);
    const auto n_kv = causal(n_tokens, n_past);
    const auto c = make_cache(type, n_past + n_tokens, n_head_kv, head_dim, 17);
    const auto q = random_q(n_tokens, n_head, head_dim, 19);
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    const auto got = run_attention(c, q, n_tokens, n_kv, n_head, scale, 2);
    const auto want = reference(c, q, n_tokens, n_kv, n_head, scale);
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("i " << i << " got " << got[i] << " want " << want[i]);
        REQUIRE(std::fabs(got[i] - want[i]) <= tolerance(c) * (1.0 + std::fabs(want[i])));
    }
}

TEST_CASE("attention with K and V of different types matches the reference, on both paths", "[kernels][attention]") {
    // An f16 K takes llama.cpp's path whatever V is; any other K the online one.
    const auto [k_type, v_type] = GENERATE(std::pair{tensor_type::f16, tensor_type::q8_0}, std::pair{tensor_type::f16, tensor_type::q4_0},
                                           std::pair{tensor_type::f16, tensor_type::f32}, std::pair{tensor_type::q8_0, tensor_type::f16},
                                           std::pair{tensor_type::f32, tensor_type::q8_0}, std::pair{tensor_type::q8_0, tensor_type::q4_0});
    const int64_t n_tokens = GENERATE(1, 5, 33);
    const int32_t n_past = GENERATE(0, 300);
    const int64_t head_dim = 64, n_head_kv = 2, n_head = 6;
    INFO("K " << k::tensor_type_info(k_type).name << " V " << k::tensor_type_info(v_type).name << " n_tokens " << n_tokens
              << " n_past " << n_past);
    const auto n_kv = causal(n_tokens, n_past);
    const auto c = make_cache(k_type, v_type, n_past + n_tokens, n_head_kv, head_dim, 97, /*pad=*/4);
    const auto q = random_q(n_tokens, n_head, head_dim, 101);
    const auto got = run_attention(c, q, n_tokens, n_kv, n_head, 0.125f, 2);
    const auto want = reference(c, q, n_tokens, n_kv, n_head, 0.125f);
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("i " << i << " got " << got[i] << " want " << want[i]);
        REQUIRE(std::fabs(got[i] - want[i]) <= tolerance(c) * (1.0 + std::fabs(want[i])));
    }
    // Bitwise the same on another thread count, as with one type.
    REQUIRE(std::memcmp(got.data(), run_attention(c, q, n_tokens, n_kv, n_head, 0.125f, 3).data(), got.size() * sizeof(float)) == 0);
}

TEST_CASE("attention with a sliding window matches the reference over each token's window", "[kernels][attention]") {
    // A window of n_swa positions ending at the token (llama.cpp's standard sliding window),
    // on every path: the online one (split into segments for long ranges) and llama.cpp's f16.
    const tensor_type type = GENERATE(tensor_type::f32, tensor_type::f16, tensor_type::q8_0);
    const int32_t n_swa = GENERATE(1, 5, 300);
    const int64_t n_tokens = GENERATE(1, 9);
    const int32_t n_past = GENERATE(0, 40, 1500);
    const int64_t head_dim = 64, n_head_kv = 1, n_head = 4;
    INFO("type " << k::tensor_type_info(type).name << " n_swa " << n_swa << " n_tokens " << n_tokens << " n_past " << n_past);
    const auto n_kv = causal(n_tokens, n_past);
    std::vector<int32_t> start(n_kv.size());
    for (size_t t = 0; t < n_kv.size(); ++t) start[t] = std::max(0, n_kv[t] - n_swa);
    const auto c = make_cache(type, n_past + n_tokens, n_head_kv, head_dim, 83);
    const auto q = random_q(n_tokens, n_head, head_dim, 89);
    const auto got = run_attention(c, q, n_tokens, n_kv, n_head, 0.125f, 2, start);
    const auto want = reference(c, q, n_tokens, n_kv, n_head, 0.125f, start);
    const auto full = reference(c, q, n_tokens, n_kv, n_head, 0.125f);
    double max_full_diff = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("i " << i << " got " << got[i] << " want " << want[i]);
        REQUIRE(std::fabs(got[i] - want[i]) <= tolerance(c) * (1.0 + std::fabs(want[i])));
        max_full_diff = std::max(max_full_diff, std::fabs(want[i] - full[i]));
    }
    // The window is not a no-op wherever it cuts something off.
    if (n_past + 1 > n_swa) REQUIRE(max_full_diff > 1e-3);
}

TEST_CASE("attention: odd lengths, small heads, long decode split into segments", "[kernels][attention]") {
    struct shape { tensor_type type; int64_t head_dim, n_head_kv, group, n_tokens; std::vector<int32_t> n_kv; };
    const std::vector<shape> shapes = {
        {tensor_type::f32, 8, 4, 2, 3, {1, 2, 3}},                  // the tiny llama's heads
        {tensor_type::f16, 40, 3, 1, 2, {65, 129}},                  // head_dim not a multiple of 32
        {tensor_type::q8_0, 32, 1, 7, 1, {1001}},                    // one KV head: the range is split
        {tensor_type::q4_0, 128, 2, 2, 1, {777}},
        {tensor_type::f16, 64, 2, 3, 4, {3000, 2999, 5, 1}},         // uneven n_kv inside one token block
        {tensor_type::q8_0, 64, 2, 2, 3, {0, 64, 2}},                // n_kv 0 attends to nothing
    };
    for (const auto & sh : shapes) {
        INFO("type " << k::tensor_type_info(sh.type).name << " head_dim " << sh.head_dim << " n_kv[0] " << sh.n_kv[0]);
        int32_t n_ctx = 1;
        for (int32_t n : sh.n_kv) n_ctx = std::max(n_ctx, n);
        const int64_t n_head = sh.n_head_kv * sh.group;
        const auto c = make_cache(sh.type, n_ctx, sh.n_head_kv, sh.head_dim, 23, /*pad=*/sh.type == tensor_type::f32 ? 12 : 6);
        const auto q = random_q(sh.n_tokens, n_head, sh.head_dim, 29);
        const float scale = 1.0f / std::sqrt(static_cast<float>(sh.head_dim));
        const auto got = run_attention(c, q, sh.n_tokens, sh.n_kv, n_head, scale, 2);
        const auto want = reference(c, q, sh.n_tokens, sh.n_kv, n_head, scale);
        for (size_t i = 0; i < got.size(); ++i) {
            INFO("i " << i << " got " << got[i] << " want " << want[i]);
            REQUIRE(std::fabs(got[i] - want[i]) <= tolerance(c) * (1.0 + std::fabs(want[i])));
        }
    }
}

TEST_CASE("attention gives bitwise the same result on 1, 2 and 3 threads", "[kernels][attention]") {
    const tensor_type type = GENERATE(tensor_type::f32, tensor_type::f16, tensor_type::q8_0);
    const int64_t n_tokens = GENERATE(1, 40);
    const int64_t head_dim = 64, n_head_kv = 2, n_head = 8;
    const auto n_kv = causal(n_tokens, 700);
    const auto c = make_cache(type, 700 + n_tokens, n_head_kv, head_dim, 31);
    const auto q = random_q(n_tokens, n_head, head_dim, 37);
    const auto a = run_attention(c, q, n_tokens, n_kv, n_head, 0.125f, 1);
    const auto b = run_attention(c, q, n_tokens, n_kv, n_head, 0.125f, 2);
    const auto d = run_attention(c, q, n_tokens, n_kv, n_head, 0.125f, 3);
    REQUIRE(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    REQUIRE(std::memcmp(a.data(), d.data(), a.size() * sizeof(float)) == 0);
}

TEST_CASE("attention: a token's output does not depend on the batch it is evaluated in", "[kernels][attention]") {
    // What exact prefix reuse needs: 700 positions evaluated as one batch, or as a prompt cut
    // anywhere and finished later (the second part sees the first in the cache), or token by
    // token at the end (decode), give bitwise the same output for every token. Except, as in
    // llama.cpp, a single-token batch over an f16 cache (its own sums; float rounding apart).
    const tensor_type type = GENERATE(tensor_type::f32, tensor_type::f16, tensor_type::q8_0);
    const int64_t head_dim = 64, n_head_kv = 2, n_head = 14, n_tokens = 700;
    const auto c = make_cache(type, n_tokens, n_head_kv, head_dim, 53);
    const auto q = random_q(n_tokens, n_head, head_dim, 59);
    const int64_t row = n_head * head_dim;
    const auto all = run_attention(c, q, n_tokens, causal(n_tokens, 0), n_head, 0.125f, 2);
    for (int64_t split : {1, 255, 256, 400, 650, 690, 699}) {
        INFO("split at " << split);
        const std::vector<float> q_tail(q.begin() + split * row, q.end());
        const auto tail = run_attention(c, q_tail, n_tokens - split, causal(n_tokens - split, static_cast<int32_t>(split)),
                                        n_head, 0.125f, 2);
        same_or_close(all.data() + split * row, tail, type == tensor_type::f16 && n_tokens - split == 1);
    }
    for (int64_t t = 690; t < n_tokens; ++t) {
        const std::vector<float> q_one(q.begin() + t * row, q.begin() + (t + 1) * row);
        const auto one = run_attention(c, q_one, 1, causal(1, static_cast<int32_t>(t)), n_head, 0.125f, 2);
        same_or_close(all.data() + t * row, one, type == tensor_type::f16);
    }
}

TEST_CASE("attention in step order: each token of a batch gets a lone token's bits, f16 cache included",
          "[kernels][attention]") {
    const tensor_type type = GENERATE(tensor_type::f32, tensor_type::f16, tensor_type::q8_0);
    const int64_t head_dim = 64, n_head_kv = 2, n_head = 14, n_ctx = 300, n_past = 290;
    const auto c = make_cache(type, n_ctx, n_head_kv, head_dim, 61);
    const int64_t n_tokens = n_ctx - n_past, row = n_head * head_dim;
    const auto q = random_q(n_tokens, n_head, head_dim, 67);
    k::thread_pool pool(2);
    std::vector<float> batch(q.size(), std::nanf(""));
    const auto mask = causal(n_tokens, static_cast<int32_t>(n_past));
    const k::kv_view kv = view(c);
    k::attention(q.data(), n_tokens, mask.data(), kv, n_head, c.n_head_kv, c.head_dim, 0.125f, batch.data(), pool,
                 nullptr, /*step_order=*/true);
    for (int64_t t = 0; t < n_tokens; ++t) {
        const std::vector<float> q_one(q.begin() + t * row, q.begin() + (t + 1) * row);
        const auto one = run_attention(c, q_one, 1, causal(1, static_cast<int32_t>(n_past + t)), n_head, 0.125f, 2);
        REQUIRE(std::memcmp(one.data(), batch.data() + t * row, one.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("attention with a single visible position returns that position's V", "[kernels][attention]") {
    const auto c = make_cache(tensor_type::f32, 4, 1, 16, 41);
    const auto q = random_q(1, 2, 16, 43);
    const std::vector<int32_t> n_kv = {1};
    const auto out = run_attention(c, q, 1, n_kv, 2, 0.25f, 2);
    for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 16; ++i) REQUIRE(out[h * 16 + i] == c.v_deq[i]);
}

TEST_CASE("attention over an f16 cache follows llama.cpp's sums step by step, bit for bit", "[kernels][attention]") {
    // The order attention.h promises, written out plainly: ggml's mul_mat (tinyBLAS's 16 lanes
    // for a batch, ggml_vec_dot_f16's 64 for one token), soft_max and mul_mat again. 700
    // positions span several of the chunks the cache is converted in, the last one partial.
    namespace simd = hearth::kernels::simd;
    const int64_t n_tokens = GENERATE(1, 3);
    const int64_t head_dim = GENERATE(64, 128);
    const int32_t n_past = GENERATE(150, 700);
    const int64_t n_head_kv = 2, group = 3, n_head = n_head_kv * group, width = n_head_kv * head_dim;
    INFO("tokens " << n_tokens << " head_dim " << head_dim << " past " << n_past);
    const auto n_kv = causal(n_tokens, n_past);
    const auto c = make_cache(tensor_type::f16, n_past + n_tokens, n_head_kv, head_dim, 71);
    const auto q = random_q(n_tokens, n_head, head_dim, 73);
    const float scale = 0.125f;
    const auto got = run_attention(c, q, n_tokens, n_kv, n_head, scale, 2);
    const int n_lanes = n_tokens >= 2 ? 16 : 64;
    const auto fold = [&](const float * lanes) {   // lanes: n_lanes partial sums
        float v[16];
        for (int l = 0; l < 16; ++l)
            v[l] = n_lanes == 16 ? lanes[l] : (lanes[l] + lanes[l + 32]) + (lanes[l + 16] + lanes[l + 48]);
        return simd::fold16(v);
    };
    for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t h = 0; h < n_head; ++h) {
            const int64_t g = h / group, n = n_kv[static_cast<size_t>(t)];
            std::vector<float> w(static_cast<size_t>(n));
            for (int64_t p = 0; p < n; ++p) {
                float lanes[64] = {};
                for (int64_t i = 0; i < head_dim; ++i)
                    lanes[i % n_lanes] = std::fma(round_f16(q[(t * n_head + h) * head_dim + i]),
                                                  c.k_deq[p * width + g * head_dim + i], lanes[i % n_lanes]);
                w[static_cast<size_t>(p)] = fold(lanes) * scale;
            }
            float m = -INFINITY;
            for (float x : w) m = std::max(m, x);
            double sum = 0;
            for (int64_t b = 0; b < n; b += 16) {
                float block[16] = {};
                for (int64_t p = b; p < std::min(n, b + 16); ++p) block[p - b] = w[p] = simd::exp_ggml(w[p] - m);
                sum += simd::fold16(block);
            }
            const auto inv = static_cast<float>(1.0 / sum);
            for (auto & x : w) x = round_f16(x * inv);
            for (int64_t i = 0; i < head_dim; ++i) {
                float lanes[64] = {};
                for (int64_t p = 0; p < n; ++p)
                    lanes[p % n_lanes] = std::fma(w[p], c.v_deq[p * width + g * head_dim + i], lanes[p % n_lanes]);
                const float want = fold(lanes);
                const float have = got[(t * n_head + h) * head_dim + i];
                INFO("t " << t << " h " << h << " i " << i << " got " << have << " want " << want);
                REQUIRE(std::memcmp(&have, &want, sizeof want) == 0);
            }
        }
}
