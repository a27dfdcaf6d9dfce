// Every ISA variant against the scalar reference: dequantize and quantize bit for bit, vec_dot
// within a stated tolerance over odd block counts, vec_dot against a double-precision dot of the
// dequantized rows, vec_dot_rows against vec_dot, and quantizer round-trip error bounds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/fp16.h"
#include "kernels/quant.h"
#include "tests/kernels/quant_test_util.h"
#include "tests/skip.h"

using namespace hearth::kernels;

namespace {

const tensor_type k_weight_types[] = {
    tensor_type::f32, tensor_type::f16, tensor_type::bf16, tensor_type::q4_0, tensor_type::q4_1,
    tensor_type::q5_0, tensor_type::q5_1, tensor_type::q8_0, tensor_type::iq4_nl, tensor_type::q2_k,
    tensor_type::q3_k, tensor_type::q4_k, tensor_type::q5_k, tensor_type::q6_k, tensor_type::iq4_xs,
};

const cpu::quant_kernels & scalar() { return cpu::quant_kernels_for(cpu::isa::scalar); }

std::vector<float> dequantized(tensor_type t, const std::vector<uint8_t> & row, int64_t n) {
    std::vector<float> out(static_cast<size_t>(n));
    scalar()[t].dequantize_row(row.data(), out.data(), n);
    return out;
}

// Bound on the magnitude of the f32 terms a dot product of these rows accumulates: each element
// contributes at most 2 * max|w| * |a_i| (a weight is scale * q - min, both parts bounded by
// max|w| as soon as a sub-block holds a zero quant), so reordering the f32 sums of the per-block
// terms changes the result by at most a few ulps of this.
double term_magnitude(const std::vector<float> & w, const std::vector<float> & a) {
    double wmax = 0.0, asum = 0.0, wa = 0.0;
    for (size_t i = 0; i < w.size(); ++i) {
        wmax = std::max(wmax, std::fabs(static_cast<double>(w[i])));
        asum += std::fabs(static_cast<double>(a[i]));
        wa += std::fabs(static_cast<double>(w[i]) * a[i]);
    }
    return std::max(2.0 * wmax * asum, wa);
}

// Relative tolerance (of term_magnitude) between a SIMD vec_dot and the scalar one, per format:
// integer block sums are exact on both sides, so only the f32 accumulation order differs; the
// float formats accumulate in f32 lanes against the scalar double sum.
double simd_tolerance(tensor_type t) {
    switch (t) {
    case tensor_type::f32:
    case tensor_type::f16:
    case tensor_type::bf16: return 2e-6;
    default: return 1e-6;
    }
}

}  // namespace

TEST_CASE("vec_dot: every ISA path matches the scalar reference", "[kernels][quant]") {
    const int n_blocks = GENERATE(1, 2, 3, 7, 64, 129);   // odd sizes hit the tail paths
    for (tensor_type t : k_weight_types) {
        const int64_t bs = tensor_type_info(t).block_size == 1 ? 37 : tensor_type_info(t).block_size;   // odd for plain types
        const int64_t n = n_blocks * bs;
        const auto w = test::random_weight_row(t, n, 1000u + static_cast<uint32_t>(n_blocks));
        const auto a = test::random_activation_row(t, n, 2000u + static_cast<uint32_t>(n_blocks));
        const tensor_type at = scalar()[t].vec_dot_type;
        const double mag = term_magnitude(dequantized(t, w, n), dequantized(at, a, n));
        const float want = scalar()[t].vec_dot(n, w.data(), a.data());
        for (cpu::isa isa : cpu::available_isas()) {
            INFO("type " << tensor_type_info(t).name << ", isa " << cpu::isa_name(isa) << ", blocks " << n_blocks);
            const auto & k = cpu::quant_kernels_for(isa)[t];
            REQUIRE(k.vec_dot_type == at);
            const float got = k.vec_dot(n, w.data(), a.data());
            CHECK(std::isfinite(got));
            CHECK(std::fabs(static_cast<double>(got) - want) <= simd_tolerance(t) * mag + 1e-30);
        }
    }
}

TEST_CASE("vec_dot q8_0: weights at -128 and +127 (the saturation edges) on every ISA", "[kernels][quant]") {
    const int64_t n = 7 * 32;
    auto w = test::random_weight_row(tensor_type::q8_0, n, 31u);
    auto * blocks = reinterpret_cast<block_q8_0 *>(w.data());
    for (int b = 0; b < 7; ++b) {
        for (int j = 0; j < 32; ++j) blocks[b].qs[j] = static_cast<int8_t>((j + b) % 3 == 0 ? -128 : (j % 2 ? 127 : -127));
    }
    // Activations of full magnitude and both signs, as quantize_row makes them (never -128).
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = (i % 4 < 2 ? 1.0f : -1.0f) * (i % 5 == 0 ? 0.5f : 1.0f);
    std::vector<uint8_t> a(row_size(tensor_type::q8_0, n));
    quantize_row(tensor_type::q8_0, x.data(), a.data(), n);
    const float want = scalar()[tensor_type::q8_0].vec_dot(n, w.data(), a.data());
    for (cpu::isa isa : cpu::available_isas()) {
        INFO("isa " << cpu::isa_name(isa));
        CHECK(cpu::quant_kernels_for(isa)[tensor_type::q8_0].vec_dot(n, w.data(), a.data()) == Approx(want).epsilon(1e-6));
    }
}

TEST_CASE("vec_dot matches a double-precision dot of the dequantized rows", "[kernels][quant]") {
    const int n_blocks = GENERATE(1, 7, 64);
    for (tensor_type t : k_weight_types) {
        const int64_t bs = tensor_type_info(t).block_size == 1 ? 37 : tensor_type_info(t).block_size;   // odd for plain types
        const int64_t n = n_blocks * bs;
        const auto w = test::random_weight_row(t, n, 3000u + static_cast<uint32_t>(n_blocks));
        const auto a = test::random_activation_row(t, n, 4000u + static_cast<uint32_t>(n_blocks));
        const auto wf = dequantized(t, w, n);
        const auto af = dequantized(scalar()[t].vec_dot_type, a, n);
        double want = 0.0;
        for (int64_t i = 0; i < n; ++i) want += static_cast<double>(wf[i]) * af[i];
        const double mag = term_magnitude(wf, af);
        for (cpu::isa isa : cpu::available_isas()) {
            INFO("type " << tensor_type_info(t).name << ", isa " << cpu::isa_name(isa) << ", blocks " << n_blocks);
            const float got = cpu::quant_kernels_for(isa)[t].vec_dot(n, w.data(), a.data());
            // Looser than the SIMD-vs-scalar bound: the f32 products of fp16 scales (d_w * d_a,
            // the q8_1 s term) round once per block on top of the accumulation.
            CHECK(std::fabs(static_cast<double>(got) - want) <= 1e-5 * mag);
        }
    }
}

TEST_CASE("vec_dot_rows equals vec_dot row by row, bit for bit", "[kernels][quant]") {
    const int n_rows = GENERATE(1, 3, 4, 5, 8, 13);
    for (tensor_type t : k_weight_types) {
        const int64_t bs = tensor_type_info(t).block_size == 1 ? 37 : tensor_type_info(t).block_size;   // odd for plain types
        const int64_t n = 7 * bs;   // 7 blocks: a kernel's 4-block steps and its tail
        const size_t stride = row_size(t, n) + 64;   // rows need not be packed
        std::vector<uint8_t> w(stride * n_rows);
        for (int r = 0; r < n_rows; ++r) {
            const auto row = test::random_weight_row(t, n, 5000u + static_cast<uint32_t>(r));
            std::memcpy(w.data() + r * stride, row.data(), row.size());
        }
        const auto a = test::random_activation_row(t, n, 6000u);
        for (cpu::isa isa : cpu::available_isas()) {
            INFO("type " << tensor_type_info(t).name << ", isa " << cpu::isa_name(isa) << ", rows " << n_rows);
            const auto & k = cpu::quant_kernels_for(isa)[t];
            std::vector<float> got(static_cast<size_t>(n_rows), -1.0f);
            k.vec_dot_rows(n, w.data(), stride, a.data(), got.data(), n_rows);
            for (int r = 0; r < n_rows; ++r) {
                const float want = k.vec_dot(n, w.data() + r * stride, a.data());
                CHECK(f32_bits(got[static_cast<size_t>(r)]) == f32_bits(want));
            }
        }
    }
}

TEST_CASE("vec_dot_tile equals vec_dot for every row and token, bit for bit (or, in llama.cpp's batch order, "
          "within rounding), and each token's bits do not depend on the others", "[kernels][quant]") {
    const int n_rows = GENERATE(1, 2, 3, 5);
    const int n_tokens = GENERATE(1, 2, 3, 4, 5, 9);
    for (tensor_type t : k_weight_types) {
        const int64_t bs = tensor_type_info(t).block_size == 1 ? 37 : tensor_type_info(t).block_size;
        const int64_t n = 7 * bs;   // 7 blocks: a kernel's 4-block steps and its tail
        const size_t w_stride = row_size(t, n) + 32;
        std::vector<uint8_t> w(w_stride * n_rows);
        for (int r = 0; r < n_rows; ++r) {
            const auto row = test::random_weight_row(t, n, 7000u + static_cast<uint32_t>(r));
            std::memcpy(w.data() + r * w_stride, row.data(), row.size());
        }
        const tensor_type at = scalar()[t].vec_dot_type;
        const size_t a_stride = row_size(at, n) + 16;
        std::vector<uint8_t> a(a_stride * n_tokens);
        for (int k = 0; k < n_tokens; ++k) {
            const auto row = test::random_activation_row(t, n, 8000u + static_cast<uint32_t>(k));
            std::memcpy(a.data() + k * a_stride, row.data(), row.size());
        }
        const int64_t out_stride = n_rows + 3;
        for (cpu::isa isa : cpu::available_isas()) {
            INFO("type " << tensor_type_info(t).name << ", isa " << cpu::isa_name(isa) << ", tile " << n_rows << " x " << n_tokens);
            const auto & k = cpu::quant_kernels_for(isa)[t];
            std::vector<float> out(static_cast<size_t>(out_stride * n_tokens), -7.0f);
            k.vec_dot_tile(n, w.data(), w_stride, n_rows, a.data(), a_stride, n_tokens, out.data(), out_stride);
            for (int tok = 0; tok < n_tokens; ++tok) {
                for (int r = 0; r < out_stride; ++r) {
                    const float got = out[static_cast<size_t>(tok * out_stride + r)];
                    if (r >= n_rows) {
                        CHECK(got == -7.0f);   // outside the tile: untouched
                        continue;
                    }
                    const float want = k.vec_dot(n, w.data() + r * w_stride, a.data() + tok * a_stride);
                    if (!k.tile_batch_order) {
                        CHECK(f32_bits(got) == f32_bits(want));
                        continue;
                    }
                    std::vector<uint8_t> w_row(w.begin() + r * w_stride, w.begin() + r * w_stride + row_size(t, n));
                    std::vector<uint8_t> a_row(a.begin() + tok * a_stride, a.begin() + tok * a_stride + row_size(at, n));
                    const double mag = term_magnitude(dequantized(t, w_row, n), dequantized(at, a_row, n));
                    CHECK(std::fabs(static_cast<double>(got) - want) <= simd_tolerance(t) * mag + 1e-30);
                    float alone = 0;
                    k.vec_dot_tile(n, w.data() + r * w_stride, w_stride, 1, a.data() + tok * a_stride, a_stride, 1, &alone, 1);
                    CHECK(f32_bits(got) == f32_bits(alone));
                }
            }
        }
    }
}

#if defined(__x86_64__)
TEST_CASE("the AVX-512 VNNI block kernels equal the AVX2 ones bit for bit", "[kernels][quant][avx512-vnni]") {
    // Both compute the same int32 lanes and the same float steps in the same order; the golden
    // results hold on either only while that stays true.
    const auto isas = cpu::available_isas();
    if (std::find(isas.begin(), isas.end(), cpu::isa::avx512_vnni) == isas.end())
        HEARTH_SKIP("this CPU has no AVX-512 VNNI");
    const auto & avx2 = cpu::quant_kernels_for(cpu::isa::avx2);
    const auto & vnni = cpu::quant_kernels_for(cpu::isa::avx512_vnni);
    const int n_rows = 37, n_tokens = 6;   // two groups of sixteen rows and a tail
    for (tensor_type t : {tensor_type::q4_0, tensor_type::q5_0, tensor_type::q8_0, tensor_type::iq4_nl, tensor_type::q4_k,
                          tensor_type::q6_k}) {
        INFO("type " << tensor_type_info(t).name);
        const int64_t n = tensor_type_info(t).block_size == 256 ? 3 * 256 : 9 * 32;
        const size_t w_stride = row_size(t, n), a_stride = row_size(vec_dot_type(t), n);
        std::vector<uint8_t> w, a;
        for (int r = 0; r < n_rows; ++r) {
            const auto row = test::random_weight_row(t, n, 9100u + static_cast<uint32_t>(r));
            w.insert(w.end(), row.begin(), row.end());
        }
        for (int k = 0; k < n_tokens; ++k) {
            const auto row = test::random_activation_row(t, n, 9200u + static_cast<uint32_t>(k));
            a.insert(a.end(), row.begin(), row.end());
        }
        std::vector<float> rows_avx2(n_rows), rows_vnni(n_rows);
        avx2[t].vec_dot_rows(n, w.data(), w_stride, a.data(), rows_avx2.data(), n_rows);
        vnni[t].vec_dot_rows(n, w.data(), w_stride, a.data(), rows_vnni.data(), n_rows);
        std::vector<float> tile_avx2(n_rows * n_tokens), tile_vnni(n_rows * n_tokens);
        avx2[t].vec_dot_tile(n, w.data(), w_stride, n_rows, a.data(), a_stride, n_tokens, tile_avx2.data(), n_rows);
        vnni[t].vec_dot_tile(n, w.data(), w_stride, n_rows, a.data(), a_stride, n_tokens, tile_vnni.data(), n_rows);
        for (int r = 0; r < n_rows; ++r) {
            CHECK(f32_bits(rows_vnni[r]) == f32_bits(rows_avx2[r]));
            CHECK(f32_bits(vnni[t].vec_dot(n, w.data() + r * w_stride, a.data())) == f32_bits(rows_avx2[r]));
            for (int k = 0; k < n_tokens; ++k)
                CHECK(f32_bits(tile_vnni[k * n_rows + r]) == f32_bits(tile_avx2[k * n_rows + r]));
        }
    }
}
#endif

TEST_CASE("dequantize_row: every ISA path equals the scalar reference bit for bit", "[kernels][quant]") {
    const int n_blocks = GENERATE(1, 3, 17);
    for (uint32_t raw = 0; raw < cpu::k_n_tensor_types; ++raw) {
        const auto t = static_cast<tensor_type>(raw);
        if (!scalar()[t].dequantize_row) continue;
        const auto & info = tensor_type_info(t);
        const int64_t n = n_blocks * (info.block_size == 1 ? 32 : info.block_size);
        std::vector<uint8_t> bytes(row_size(t, n));
        std::mt19937 rng(7u + raw);
        for (auto & b : bytes) b = static_cast<uint8_t>(rng());   // any bit pattern, NaN scales included
        if (t == tensor_type::q8_k) {   // its f32 scale: keep it finite so NaN payload rules stay f16-only
            for (int64_t b = 0; b < n_blocks; ++b) {
                const float d = 0.01f * static_cast<float>(b + 1);
                std::memcpy(bytes.data() + b * info.type_size, &d, sizeof d);
            }
        }
        std::vector<float> want(static_cast<size_t>(n));
        scalar()[t].dequantize_row(bytes.data(), want.data(), n);
        for (cpu::isa isa : cpu::available_isas()) {
            INFO("type " << info.name << ", isa " << cpu::isa_name(isa));
            std::vector<float> got(static_cast<size_t>(n));
            cpu::quant_kernels_for(isa)[t].dequantize_row(bytes.data(), got.data(), n);
            CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
        }
    }
}

TEST_CASE("quantize_row: every ISA path equals the scalar reference byte for byte", "[kernels][quant]") {
    const int n_blocks = GENERATE(1, 3, 17);
    const tensor_type types[] = {tensor_type::f32, tensor_type::f16, tensor_type::bf16, tensor_type::q4_0,
                                 tensor_type::q8_0, tensor_type::q8_1, tensor_type::q8_k};
    for (tensor_type t : types) {
        const int64_t n = n_blocks * 256;
        auto x = test::random_floats(n, 11u + static_cast<uint32_t>(n_blocks), 2.0f);
        x[5] = 0.0f;
        x[40] = 1e-8f;   // subnormal in f16
        // The largest magnitude twice with both signs (q8_K's scale takes the first's sign): in
        // one group of 8 in the first block, far apart in the next.
        x[105] = -50.0f;
        x[107] = 50.0f;
        if (n_blocks > 1) {
            x[256 + 100] = -60.0f;
            x[256 + 201] = 60.0f;
        }
        std::vector<uint8_t> want(row_size(t, n));
        scalar()[t].quantize_row(x.data(), want.data(), n);
        for (cpu::isa isa : cpu::available_isas()) {
            INFO("type " << tensor_type_info(t).name << ", isa " << cpu::isa_name(isa));
            std::vector<uint8_t> got(want.size());
            cpu::quant_kernels_for(isa)[t].quantize_row(x.data(), got.data(), n);
            CHECK(got == want);
        }
    }
}

TEST_CASE("quantize_row round trip stays within half a quantization step", "[kernels][quant]") {
    const int64_t n = 32 * 256;
    const auto x = test::random_floats(n, 99u, 3.0f);
    SECTION("q8_0 and q8_1: |x - q| <= d / 2 with d = amax / 127, and q8_1's s = d * sum(q)") {
        for (tensor_type t : {tensor_type::q8_0, tensor_type::q8_1}) {
            std::vector<uint8_t> q(row_size(t, n));
            quantize_row(t, x.data(), q.data(), n);
            std::vector<float> y(static_cast<size_t>(n));
            dequantize_row(t, q.data(), y.data(), n);
            for (int64_t b = 0; b < n / 32; ++b) {
                float amax = 0.0f;
                for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
                const float d = amax / 127.0f;
                for (int j = 0; j < 32; ++j) {
                    const int64_t i = b * 32 + j;
                    // d is stored as f16 (relative error 2^-11), which moves q * d by up to 127 * d * 2^-11.
                    REQUIRE(std::fabs(x[i] - y[i]) <= 0.5f * d + 127.0f * d * 0x1p-11f);
                }
                if (t == tensor_type::q8_1) {
                    const auto * blk = reinterpret_cast<const block_q8_1 *>(q.data()) + b;
                    int sum = 0;
                    for (int j = 0; j < 32; ++j) sum += blk->qs[j];
                    REQUIRE(blk->s == fp32_to_fp16(static_cast<float>(sum) * d));
                }
            }
        }
    }
    SECTION("q8_K: |x - q| <= d / 2 with d = max / 127, and bsums are the sums of 16 quants") {
        std::vector<uint8_t> q(row_size(tensor_type::q8_k, n));
        quantize_row(tensor_type::q8_k, x.data(), q.data(), n);
        const auto * blk = reinterpret_cast<const block_q8_K *>(q.data());
        for (int64_t b = 0; b < n / 256; ++b) {
            float amax = 0.0f;
            for (int j = 0; j < 256; ++j) amax = std::max(amax, std::fabs(x[b * 256 + j]));
            REQUIRE(std::fabs(blk[b].d) == Approx(amax / 127.0f).epsilon(1e-6));
            for (int j = 0; j < 256; ++j) {
                REQUIRE(std::fabs(x[b * 256 + j] - blk[b].d * blk[b].qs[j]) <= 0.5f * std::fabs(blk[b].d) * 1.0001f);
            }
            for (int g = 0; g < 16; ++g) {
                int sum = 0;
                for (int l = 0; l < 16; ++l) sum += blk[b].qs[16 * g + l];
                REQUIRE(blk[b].bsums[g] == sum);
            }
        }
    }
    SECTION("q4_0: |x - q| <= |d| with d = max / -8 (the top of the range clips to 15)") {
        std::vector<uint8_t> q(row_size(tensor_type::q4_0, n));
        quantize_row(tensor_type::q4_0, x.data(), q.data(), n);
        std::vector<float> y(static_cast<size_t>(n));
        dequantize_row(tensor_type::q4_0, q.data(), y.data(), n);
        for (int64_t b = 0; b < n / 32; ++b) {
            float amax = 0.0f;
            for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
            const float d = amax / 8.0f;
            for (int j = 0; j < 32; ++j) REQUIRE(std::fabs(x[b * 32 + j] - y[b * 32 + j]) <= d * (1.0f + 0x1p-10f) * 1.01f);
        }
    }
    SECTION("an all-zero row quantizes to zeros") {
        const std::vector<float> zeros(256, 0.0f);
        for (tensor_type t : {tensor_type::q4_0, tensor_type::q8_0, tensor_type::q8_1, tensor_type::q8_k}) {
            std::vector<uint8_t> q(row_size(t, 256));
            quantize_row(t, zeros.data(), q.data(), 256);
            std::vector<float> y(256, 1.0f);
            dequantize_row(t, q.data(), y.data(), 256);
            for (float v : y) REQUIRE(v == 0.0f);
        }
    }
}

TEST_CASE("vec_dot_type and the type table agree with ggml", "[kernels][quant]") {
    CHECK(vec_dot_type(tensor_type::q4_0) == tensor_type::q8_0);
    CHECK(vec_dot_type(tensor_type::q5_0) == tensor_type::q8_0);
    CHECK(vec_dot_type(tensor_type::iq4_nl) == tensor_type::q8_0);
    CHECK(vec_dot_type(tensor_type::q4_1) == tensor_type::q8_1);
    CHECK(vec_dot_type(tensor_type::q5_1) == tensor_type::q8_1);
    CHECK(vec_dot_type(tensor_type::q4_k) == tensor_type::q8_k);
    CHECK(vec_dot_type(tensor_type::iq4_xs) == tensor_type::q8_k);
    CHECK(vec_dot_type(tensor_type::f16) == tensor_type::f16);
    CHECK(vec_dot_type(tensor_type::bf16) == tensor_type::bf16);
    CHECK(tensor_type_info(tensor_type::q8_1).type_size == sizeof(block_q8_1));
    CHECK(tensor_type_info(tensor_type::q8_k).type_size == sizeof(block_q8_K));
    CHECK(tensor_type_info(tensor_type::q6_k).type_size == sizeof(block_q6_K));
    CHECK(row_size(tensor_type::q4_k, 512) == 2 * sizeof(block_q4_K));
    CHECK(is_supported(tensor_type::q5_k));
    CHECK_FALSE(is_supported(tensor_type::iq2_xxs));
}
