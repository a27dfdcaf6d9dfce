#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/fp16.h"
#include "kernels/ops.h"
#include "kernels/ops_simd.h"

namespace k = hearth::kernels;

namespace {

std::vector<float> random_vec(size_t n, uint32_t seed, float sd = 1.0f, float mean = 0.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(mean, sd);
    std::vector<float> v(n);
    for (auto & x : v) x = nd(rng);
    return v;
}

}  // namespace

TEST_CASE("rms_norm matches a double reference, with and without weight, in place, each row as alone",
          "[kernels][ops]") {
    const int64_t n_tokens = GENERATE(3, 9);   // rows go by four: a group and a tail
    const int64_t n = GENERATE(1, 7, 64, 4096);
    const float eps = 1e-5f;
    const auto x = random_vec(static_cast<size_t>(n_tokens * n), 1, 2.0f, 0.3f);
    const auto w = random_vec(static_cast<size_t>(n), 2);
    for (bool with_w : {false, true}) {
        std::vector<float> y(x.size());
        k::rms_norm(x.data(), with_w ? w.data() : nullptr, y.data(), n_tokens, n, eps);
        std::vector<float> inplace = x;
        k::rms_norm(inplace.data(), with_w ? w.data() : nullptr, inplace.data(), n_tokens, n, eps);
        CHECK(inplace == y);
        for (int64_t t = 0; t < n_tokens; ++t) {
            std::vector<float> alone(static_cast<size_t>(n));
            k::rms_norm(x.data() + t * n, with_w ? w.data() : nullptr, alone.data(), 1, n, eps);
            CHECK(std::memcmp(alone.data(), y.data() + t * n, alone.size() * sizeof(float)) == 0);
        }
        for (int64_t t = 0; t < n_tokens; ++t) {
            double ss = 0;
            for (int64_t i = 0; i < n; ++i) ss += double(x[t * n + i]) * x[t * n + i];
            const double scale = 1.0 / std::sqrt(ss / n + eps);
            for (int64_t i = 0; i < n; ++i) {
                const double want = x[t * n + i] * scale * (with_w ? w[i] : 1.0);
                REQUIRE(std::fabs(y[t * n + i] - want) <= 1e-6 * std::fabs(want) + 1e-7);
            }
        }
    }
}

TEST_CASE("layer_norm matches a double reference", "[kernels][ops]") {
    const int64_t n_tokens = 2, n = 300;
    const float eps = 1e-5f;
    const auto x = random_vec(static_cast<size_t>(n_tokens * n), 3, 3.0f, 5.0f);   // a large mean to remove
    const auto w = random_vec(static_cast<size_t>(n), 4);
    const auto b = random_vec(static_cast<size_t>(n), 5);
    std::vector<float> y(x.size());
    k::layer_norm(x.data(), w.data(), b.data(), y.data(), n_tokens, n, eps);
    for (int64_t t = 0; t < n_tokens; ++t) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < n; ++i) mean += x[t * n + i];
        mean /= n;
        for (int64_t i = 0; i < n; ++i) var += (x[t * n + i] - mean) * (x[t * n + i] - mean);
        var /= n;
        for (int64_t i = 0; i < n; ++i) {
            const double want = (x[t * n + i] - mean) / std::sqrt(var + eps) * w[i] + b[i];
            REQUIRE(std::fabs(y[t * n + i] - want) <= 1e-5 * (std::fabs(want) + std::fabs(b[i])) + 1e-6);
        }
    }
    std::vector<float> no_affine(x.size());
    k::layer_norm(x.data(), nullptr, nullptr, no_affine.data(), n_tokens, n, eps);
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) { mean += no_affine[i]; sq += double(no_affine[i]) * no_affine[i]; }
    CHECK(std::fabs(mean / n) < 1e-5);
    CHECK(std::fabs(sq / n - 1.0) < 1e-3);
}

namespace {

// The angle of pair i as ggml computes it (a chain of f32 products), rotated in double.
std::vector<float> rope_reference(const std::vector<float> & x, int64_t n_tokens, int64_t n_head, int64_t head_dim,
                                  const std::vector<int32_t> & pos, const k::rope_params & p) {
    std::vector<float> y = x;
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    for (int64_t t = 0; t < n_tokens; ++t) {
        for (int64_t h = 0; h < n_head; ++h) {
            float theta = static_cast<float>(pos[t]);
            for (int64_t i = 0; i < p.n_rot / 2; ++i) {
                const double a = static_cast<double>(p.freq_scale * theta);
                const int64_t i0 = p.mode == k::rope_mode::normal ? 2 * i : i;
                const int64_t i1 = p.mode == k::rope_mode::normal ? 2 * i + 1 : i + p.n_rot / 2;
                const int64_t base = (t * n_head + h) * head_dim;
                const double x0 = x[base + i0], x1 = x[base + i1];
                y[base + i0] = static_cast<float>(x0 * std::cos(a) - x1 * std::sin(a));
                y[base + i1] = static_cast<float>(x0 * std::sin(a) + x1 * std::cos(a));
                theta *= theta_scale;
            }
        }
    }
    return y;
}

}  // namespace

TEST_CASE("rope normal and neox rotate the right pairs by ggml's angles", "[kernels][ops]") {
    const int64_t n_tokens = 4, n_head = 3;
    const std::vector<int32_t> pos = {0, 1, 37, 4095};
    for (auto mode : {k::rope_mode::normal, k::rope_mode::neox})
        for (int64_t head_dim : {8, 64, 128})
            for (int64_t n_rot : {head_dim, head_dim / 2})
                for (float freq_scale : {1.0f, 0.25f}) {
                    INFO("mode " << int(mode) << " head_dim " << head_dim << " n_rot " << n_rot << " scale " << freq_scale);
                    const k::rope_params p{static_cast<int32_t>(n_rot), 10000.0f, freq_scale, mode};
                    const auto x = random_vec(static_cast<size_t>(n_tokens * n_head * head_dim), 6);
                    auto y = x;
                    k::rope(y.data(), n_tokens, n_head, head_dim, pos.data(), p);
                    const auto want = rope_reference(x, n_tokens, n_head, head_dim, pos, p);
                    for (size_t i = 0; i < y.size(); ++i) REQUIRE(std::fabs(y[i] - want[i]) <= 2e-6f);
                    // Position 0 is the identity; dimensions past n_rot pass through untouched.
                    for (int64_t i = 0; i < n_head * head_dim; ++i) REQUIRE(y[i] == x[i]);
                    for (int64_t t = 0; t < n_tokens; ++t)
                        for (int64_t h = 0; h < n_head; ++h)
                            for (int64_t d = n_rot; d < head_dim; ++d) {
                                const size_t i = static_cast<size_t>((t * n_head + h) * head_dim + d);
                                REQUIRE(y[i] == x[i]);
                            }
                }
}

TEST_CASE("rope: hand-computed values for both pair orders", "[kernels][ops]") {
    // head_dim 4, n_rot 4, base 100: theta_0 = pos, theta_1 = pos / 10.
    std::vector<float> v = {1, 2, 3, 4};
    const int32_t pos = 2;
    const double a0 = 2.0, a1 = 0.2;
    auto normal = v;
    k::rope(normal.data(), 1, 1, 4, &pos, {4, 100.0f, 1.0f, k::rope_mode::normal});
    CHECK(normal[0] == Approx(1 * std::cos(a0) - 2 * std::sin(a0)).epsilon(1e-6));
    CHECK(normal[1] == Approx(1 * std::sin(a0) + 2 * std::cos(a0)).epsilon(1e-6));
    CHECK(normal[2] == Approx(3 * std::cos(a1) - 4 * std::sin(a1)).epsilon(1e-6));
    CHECK(normal[3] == Approx(3 * std::sin(a1) + 4 * std::cos(a1)).epsilon(1e-6));
    auto neox = v;
    k::rope(neox.data(), 1, 1, 4, &pos, {4, 100.0f, 1.0f, k::rope_mode::neox});
    CHECK(neox[0] == Approx(1 * std::cos(a0) - 3 * std::sin(a0)).epsilon(1e-6));
    CHECK(neox[2] == Approx(1 * std::sin(a0) + 3 * std::cos(a0)).epsilon(1e-6));
    CHECK(neox[1] == Approx(2 * std::cos(a1) - 4 * std::sin(a1)).epsilon(1e-6));
    CHECK(neox[3] == Approx(2 * std::sin(a1) + 4 * std::cos(a1)).epsilon(1e-6));
}

TEST_CASE("rope: the f32 angle chain stays within float rounding of the exact angles", "[kernels][ops]") {
    const int64_t head_dim = 64;
    const k::rope_params p{64, 1e6f, 1.0f, k::rope_mode::neox};
    const int32_t pos = 100;
    const auto x = random_vec(static_cast<size_t>(head_dim), 8);
    auto y = x;
    k::rope(y.data(), 1, 1, head_dim, &pos, p);
    for (int64_t i = 0; i < 32; ++i) {
        const double a = pos * std::pow(1e6, -2.0 * i / 64);
        const double w0 = x[i] * std::cos(a) - x[i + 32] * std::sin(a);
        const double w1 = x[i] * std::sin(a) + x[i + 32] * std::cos(a);
        CHECK(std::fabs(y[i] - w0) < 1e-4);
        CHECK(std::fabs(y[i + 32] - w1) < 1e-4);
    }
}

TEST_CASE("softmax: max-subtracted, sums to one, matches double", "[kernels][ops]") {
    const int64_t n = GENERATE(1, 5, 512);
    const float scale = GENERATE(1.0f, 0.125f);
    auto x = random_vec(static_cast<size_t>(2 * n), 9, 4.0f);
    x[0] = 1000.0f;   // would overflow exp without the max subtraction
    std::vector<float> y(x.size());
    k::softmax(x.data(), y.data(), 2, n, scale);
    for (int64_t r = 0; r < 2; ++r) {
        double mx = -INFINITY, sum = 0;
        for (int64_t i = 0; i < n; ++i) mx = std::max(mx, double(x[r * n + i]) * scale);
        for (int64_t i = 0; i < n; ++i) sum += std::exp(double(x[r * n + i]) * scale - mx);
        double total = 0;
        for (int64_t i = 0; i < n; ++i) {
            const double want = std::exp(double(x[r * n + i]) * scale - mx) / sum;
            REQUIRE(std::fabs(y[r * n + i] - want) <= 1e-6 * want + 1e-9);
            total += y[r * n + i];
        }
        CHECK(total == Approx(1.0).epsilon(1e-5));
    }
    auto inplace = x;
    k::softmax(inplace.data(), inplace.data(), 2, n, scale);
    CHECK(inplace == y);
}

TEST_CASE("silu, swiglu and gelu match their formulas", "[kernels][ops]") {
    auto x = random_vec(1000, 10, 5.0f);
    x.insert(x.end(), {0.0f, -0.0f, 30.0f, -30.0f, 100.0f, -100.0f, 9.99f, 10.0f, -10.0f, -9.99f});
    const auto up = random_vec(x.size(), 11);
    std::vector<float> s(x.size()), g(x.size()), sw(x.size());
    k::silu(x.data(), s.data(), x.size());
    k::gelu(x.data(), g.data(), x.size());
    k::swiglu(x.data(), up.data(), sw.data(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        const double v = x[i];
        const double silu = v / (1.0 + std::exp(-v));
        REQUIRE(std::fabs(s[i] - silu) <= 1e-6 * std::fabs(silu) + 1e-30);
        REQUIRE(std::fabs(sw[i] - silu * up[i]) <= 2e-6 * std::fabs(silu * up[i]) + 1e-30);
        const double gelu = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * v * (1.0 + 0.044715 * v * v)));
        INFO("x " << v << " gelu " << g[i] << " want " << gelu);
        if (v <= -10.0) {
            REQUIRE(g[i] == 0.0f);
        } else if (v >= 10.0) {
            REQUIRE(g[i] == x[i]);
        } else {
            // The input and the result each go through fp16 (as in ggml): relative 2^-11 each,
            // times the slope of gelu (< 1.13) for the input's rounding.
            REQUIRE(std::fabs(g[i] - gelu) <= 2.5e-3 * std::fabs(v) + 1e-3 * std::fabs(gelu) + 1e-7);
        }
    }
    // Table inputs exactly representable in fp16 give fp16(gelu(x)).
    for (float v : {0.5f, -1.25f, 3.0f, -0.0625f}) {
        float out;
        k::gelu(&v, &out, 1);
        const float want = static_cast<float>(0.5 * v * (1.0 + std::tanh(0.7978845608028654 * v * (1.0 + 0.044715 * v * v))));
        CHECK(out == k::fp16_to_fp32(k::fp32_to_fp16(want)));
    }
}

TEST_CASE("gelu: the fp16 table holds ggml's entries, rounded from its FMA-contracted formula", "[kernels][ops]") {
    // ggml builds its table from 0.5x(1 + tanh(sqrt(2/pi) x (1 + 0.044715 x x))) with the
    // compiler contracting 1 + (0.044715 x) x into one fma. Of the 65,536 entries, one rounds
    // otherwise without the fma: x = -1.9990234375, whose gelu -0.04548643... is within 3e-11
    // of the halfway point between two fp16 values. llama.cpp's is the lower one (gemma-3-270m's
    // ffn_geglu, tests/golden/README.md).
    const float x = -1.9990234375f;
    float out = 0.0f;
    k::gelu(&x, &out, 1);
    CHECK(out == k::fp16_to_fp32(k::fp32_to_fp16(-0.045501709f)));
    CHECK(out == -0.045501708984375f);
}

TEST_CASE("add, mul and add_row", "[kernels][ops]") {
    const auto a = random_vec(37, 12), b = random_vec(37, 13);
    std::vector<float> y(37);
    k::add(a.data(), b.data(), y.data(), 37);
    for (size_t i = 0; i < 37; ++i) REQUIRE(y[i] == a[i] + b[i]);
    k::mul(a.data(), b.data(), y.data(), 37);
    for (size_t i = 0; i < 37; ++i) REQUIRE(y[i] == a[i] * b[i]);
    auto x = a;
    k::add(x.data(), b.data(), 37);
    for (size_t i = 0; i < 37; ++i) REQUIRE(x[i] == a[i] + b[i]);
    std::vector<float> m(3 * 5, 1.0f), bias = {1, 2, 3, 4, 5};
    k::add_row(m.data(), bias.data(), 3, 5);
    for (int t = 0; t < 3; ++t)
        for (int i = 0; i < 5; ++i) REQUIRE(m[t * 5 + i] == 2.0f + i);
}

TEST_CASE("every ISA variant of the f32 vector primitives matches the portable one", "[kernels][ops]") {
    namespace simd = hearth::kernels::simd;
    namespace cpu = hearth::kernels::cpu;
    const auto & ref = simd::f32_kernels_for(cpu::isa::scalar);
    for (cpu::isa isa : cpu::available_isas()) {
        const auto & v = simd::f32_kernels_for(isa);
        INFO("isa " << cpu::isa_name(isa));
        for (int64_t n : {1, 7, 8, 9, 31, 32, 33, 64, 100, 1000}) {
            INFO("n " << n);
            auto a = random_vec(static_cast<size_t>(n), 20, 3.0f);
            const auto b = random_vec(static_cast<size_t>(n), 21, 3.0f);
            // The whole range exp and silu see: very negative (underflow to 0), large positive.
            if (n >= 9) { a[0] = -200.0f; a[1] = -87.0f; a[2] = 88.0f; a[3] = 80.0f; a[4] = -0.0f; a[5] = 1e-30f; }

            double mag = 0;
            for (int64_t i = 0; i < n; ++i) mag += std::fabs(double(a[i]) * b[i]);
            REQUIRE(std::fabs(v.dot(a.data(), b.data(), n) - ref.dot(a.data(), b.data(), n)) <= 1e-6 * mag);

            auto y1 = b, y2 = b;
            v.axpy(0.37f, a.data(), y1.data(), n);
            ref.axpy(0.37f, a.data(), y2.data(), n);
            for (int64_t i = 0; i < n; ++i) REQUIRE(std::fabs(y1[i] - y2[i]) <= 1e-6f * (std::fabs(y2[i]) + std::fabs(a[i])));
            v.scale(y1.data(), -1.5f, n);
            ref.scale(y2.data(), -1.5f, n);

            std::vector<float> e1(static_cast<size_t>(n)), e2(static_cast<size_t>(n));
            const float s1 = v.exp_shifted(a.data(), 2.0f, e1.data(), n);
            const float s2 = ref.exp_shifted(a.data(), 2.0f, e2.data(), n);
            for (int64_t i = 0; i < n; ++i) {
                const float d = a[i] - 2.0f;   // the kernels subtract in f32
                const double want = d < -87.33654f ? 0.0 : std::exp(double(d));
                INFO("exp(" << a[i] - 2.0f << ") = " << e1[i] << ", want " << want);
                REQUIRE(std::fabs(e1[i] - want) <= 3e-7 * want);   // ~2 ulp
                REQUIRE(std::fabs(e2[i] - want) <= 3e-7 * want);
            }
            REQUIRE(std::fabs(s1 - s2) <= 1e-6f * s2);

            // Rows of d floats at a stride: q . k[i] and sum_i p[i] v[i], as attention uses them.
            for (int64_t d : {8, 40, 64, 128}) {
                const int64_t stride = d + 3;
                const auto kv = random_vec(static_cast<size_t>(n * stride), 22);
                const auto q = random_vec(static_cast<size_t>(d), 23);
                std::vector<float> r1(static_cast<size_t>(n)), r2(static_cast<size_t>(n));
                v.dot_rows(q.data(), kv.data(), stride, n, d, 0.125f, r1.data());
                ref.dot_rows(q.data(), kv.data(), stride, n, d, 0.125f, r2.data());
                for (int64_t i = 0; i < n; ++i) {
                    double m = 0;
                    for (int64_t j = 0; j < d; ++j) m += std::fabs(double(q[j]) * kv[i * stride + j]);
                    REQUIRE(std::fabs(r1[i] - r2[i]) <= 1e-6 * 0.125 * m);
                }
                const auto p = random_vec(static_cast<size_t>(n), 24);
                auto acc1 = random_vec(static_cast<size_t>(d), 25), acc2 = acc1;
                v.weighted_sum(p.data(), kv.data(), stride, n, d, acc1.data());
                ref.weighted_sum(p.data(), kv.data(), stride, n, d, acc2.data());
                for (int64_t j = 0; j < d; ++j) {
                    double m = std::fabs(acc2[j]);
                    for (int64_t i = 0; i < n; ++i) m += std::fabs(double(p[i]) * kv[i * stride + j]);
                    REQUIRE(std::fabs(acc1[j] - acc2[j]) <= 1e-6 * m);
                }
            }

            // The llama.cpp-exact kernels: the same bits in every variant.
            const double es1 = v.exp_sum16(a.data(), 2.0f, e1.data(), n);
            const double es2 = ref.exp_sum16(a.data(), 2.0f, e2.data(), n);
            REQUIRE(es1 == es2);
            REQUIRE(std::memcmp(e1.data(), e2.data(), e1.size() * sizeof(float)) == 0);
            for (auto [n_lanes, d] : {std::pair<int, int64_t>{16, 32}, {16, 64}, {64, 128}}) {
                const int64_t stride = d + 5;
                const auto kv = random_vec(static_cast<size_t>(n * stride + 64), 26);   // rows read up to 64 wide
                const auto q = random_vec(static_cast<size_t>(d), 27);
                std::vector<float> r1(static_cast<size_t>(n)), r2(static_cast<size_t>(n));
                v.dot_lanes_rows(q.data(), kv.data(), stride, n, d, n_lanes, r1.data());
                ref.dot_lanes_rows(q.data(), kv.data(), stride, n, d, n_lanes, r2.data());
                REQUIRE(std::memcmp(r1.data(), r2.data(), r1.size() * sizeof(float)) == 0);
                for (int64_t dv : {int64_t{8}, int64_t{64}, int64_t{13}}) {
                    // Three sets of weights, each set's lanes as a call of its own makes them.
                    const int64_t n_sets = 3, p_stride = n + 2, lanes_stride = n_lanes * dv + 7;
                    const auto p = random_vec(static_cast<size_t>(n_sets * p_stride), 28);
                    auto l1 = random_vec(static_cast<size_t>(n_sets * lanes_stride), 29), l2 = l1, l3 = l1;
                    v.lane_axpy(p.data(), p_stride, kv.data(), stride, n, dv, n_lanes, l1.data(), lanes_stride, n_sets);
                    ref.lane_axpy(p.data(), p_stride, kv.data(), stride, n, dv, n_lanes, l2.data(), lanes_stride, n_sets);
                    REQUIRE(std::memcmp(l1.data(), l2.data(), l1.size() * sizeof(float)) == 0);
                    for (int64_t set = 0; set < n_sets; ++set)
                        v.lane_axpy(p.data() + set * p_stride, 0, kv.data(), stride, n, dv, n_lanes,
                                    l3.data() + set * lanes_stride, 0, 1);
                    REQUIRE(std::memcmp(l1.data(), l3.data(), l1.size() * sizeof(float)) == 0);
                }
            }

            // f16 rows at a stride holding every kind of value (the odd step walks all 65536 patterns).
            for (int64_t d : {int64_t{8}, int64_t{40}, int64_t{128}}) {
                const size_t stride = static_cast<size_t>(d) * 2 + 6;
                std::vector<uint8_t> rows(stride * static_cast<size_t>(n));
                for (size_t b = 0; b + 1 < rows.size(); b += 2) {
                    const auto h = static_cast<uint16_t>((b / 2) * 40503u + static_cast<size_t>(n) * 7u);
                    std::memcpy(rows.data() + b, &h, 2);
                }
                std::vector<float> f1(static_cast<size_t>(n * d)), f2(f1.size());
                v.f16_rows_to_f32(rows.data(), stride, n, d, f1.data());
                ref.f16_rows_to_f32(rows.data(), stride, n, d, f2.data());
                REQUIRE(std::memcmp(f1.data(), f2.data(), f1.size() * sizeof(float)) == 0);
                for (int64_t i = 0; i < n; ++i)
                    for (int64_t j = 0; j < d; ++j) {
                        uint16_t h;
                        std::memcpy(&h, rows.data() + static_cast<size_t>(i) * stride + static_cast<size_t>(j) * 2, 2);
                        const float want = hearth::kernels::fp16_to_fp32(h);
                        if (!std::isnan(want)) REQUIRE(std::memcmp(&f2[i * d + j], &want, sizeof want) == 0);
                        else REQUIRE(std::isnan(f2[i * d + j]));
                    }
            }

            {
                auto a1 = random_vec(static_cast<size_t>(n), 30), b1 = random_vec(static_cast<size_t>(n), 31);
                auto a2 = a1, b2 = b1;
                const auto c = random_vec(static_cast<size_t>(n), 32), sn = random_vec(static_cast<size_t>(n), 33);
                v.rotate_pairs(a1.data(), b1.data(), c.data(), sn.data(), n);
                ref.rotate_pairs(a2.data(), b2.data(), c.data(), sn.data(), n);
                REQUIRE(std::memcmp(a1.data(), a2.data(), a1.size() * sizeof(float)) == 0);
                REQUIRE(std::memcmp(b1.data(), b2.data(), b1.size() * sizeof(float)) == 0);
            }

            std::vector<float> o1(static_cast<size_t>(n)), o2(static_cast<size_t>(n));
            v.silu(a.data(), o1.data(), n);
            ref.silu(a.data(), o2.data(), n);
            for (int64_t i = 0; i < n; ++i) REQUIRE(std::fabs(o1[i] - o2[i]) <= 5e-7f * std::fabs(o2[i]) + 1e-37f);
            v.swiglu(a.data(), b.data(), o1.data(), n);
            ref.swiglu(a.data(), b.data(), o2.data(), n);
            for (int64_t i = 0; i < n; ++i) REQUIRE(std::fabs(o1[i] - o2[i]) <= 5e-7f * std::fabs(o2[i]) + 1e-37f);
        }
    }
}

TEST_CASE("exp_ggml: within 2 ulp of exp, ggml's limits, and fold_lanes' order", "[kernels][ops]") {
    namespace simd = hearth::kernels::simd;
    std::mt19937 rng(61);
    std::uniform_real_distribution<float> u(-87.0f, 88.0f);
    for (int i = 0; i < 100000; ++i) {
        const float x = u(rng);
        const double want = std::exp(double(x));
        INFO("exp_ggml(" << x << ") = " << simd::exp_ggml(x) << ", want " << want);
        REQUIRE(std::fabs(simd::exp_ggml(x) - want) <= 2.4e-7 * want);
    }
    REQUIRE(simd::exp_ggml(0.0f) == 1.0f);
    REQUIRE(simd::exp_ggml(-INFINITY) == 0.0f);
    REQUIRE(simd::exp_ggml(-200.0f) == 0.0f);
    REQUIRE(simd::exp_ggml(INFINITY) == INFINITY);
    REQUIRE(simd::exp_ggml(100.0f) == INFINITY);
    REQUIRE(std::isnan(simd::exp_ggml(NAN)));
    const float sub = simd::exp_ggml(-100.0f);   // subnormal, as ggml's scalef gives it
    REQUIRE(sub > 0.0f);
    REQUIRE(sub < 1.2e-38f);
    REQUIRE(std::fabs(sub - std::exp(-100.0)) <= 1e-45 + 1e-3 * std::exp(-100.0));

    // Lanes whose sum depends on the grouping: 1e8 cancels only where the order pairs it.
    float lanes[64] = {};
    lanes[0] = 1e8f;
    lanes[8] = -1e8f;
    lanes[1] = 1.0f;
    REQUIRE(simd::fold16(lanes) == 1.0f);          // (x0 + x8) first: 1e8 cancels, then + 1
    REQUIRE(simd::fold_lanes(lanes, 16, 1) == 1.0f);
    float wide[64] = {};
    wide[0] = 1e8f;
    wide[32] = -1e8f;                              // v0 + v2 first, as ggml's reduce
    wide[16] = 1.0f;
    REQUIRE(simd::fold_lanes(wide, 64, 1) == 1.0f);

    for (int n_lanes : {16, 64}) {   // fold_lane_rows: fold_lanes column by column
        const int64_t d = 24;
        auto rows = random_vec(static_cast<size_t>(n_lanes * d), 67, 1e4f);
        std::vector<float> want(static_cast<size_t>(d)), got(static_cast<size_t>(d));
        for (int64_t j = 0; j < d; ++j) want[static_cast<size_t>(j)] = simd::fold_lanes(rows.data() + j, n_lanes, d);
        simd::fold_lane_rows(rows.data(), n_lanes, d, got.data());
        REQUIRE(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
    }
}
