#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/fp16.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"

namespace k = hearth::kernels;
using k::tensor_type;

namespace {

struct f16_field_layout {
    tensor_type type;
    std::vector<size_t> offsets;   // byte offsets of the fp16 scale fields inside one block
};

// Where each block format keeps its fp16 scales (kernels/blocks.h); the other bytes are quants,
// for which any bit pattern is valid.
const std::vector<f16_field_layout> & scale_layouts() {
    static const std::vector<f16_field_layout> v = {
        {tensor_type::q4_0, {0}},    {tensor_type::q4_1, {0, 2}}, {tensor_type::q5_0, {0}},
        {tensor_type::q5_1, {0, 2}}, {tensor_type::q8_0, {0}},    {tensor_type::q2_k, {80, 82}},
        {tensor_type::q3_k, {108}},  {tensor_type::q4_k, {0, 2}}, {tensor_type::q5_k, {0, 2}},
        {tensor_type::q6_k, {208}},  {tensor_type::iq4_nl, {0}},  {tensor_type::iq4_xs, {0}},
    };
    return v;
}

// n_rows rows of a random weight matrix of type t: float types from random values, block types
// from random quants with scales in a realistic range.
std::vector<uint8_t> random_weights(tensor_type t, int64_t n_rows, int64_t n_cols, uint32_t seed) {
    std::mt19937 rng(seed);
    const size_t row_bytes = k::row_size(t, n_cols);
    std::vector<uint8_t> out(row_bytes * static_cast<size_t>(n_rows));
    if (t == tensor_type::f32 || t == tensor_type::f16 || t == tensor_type::bf16) {
        std::normal_distribution<float> nd(0.0f, 0.5f);
        std::vector<float> row(static_cast<size_t>(n_cols));
        for (int64_t r = 0; r < n_rows; ++r) {
            for (auto & v : row) v = nd(rng);
            k::quantize_row(t, row.data(), out.data() + static_cast<size_t>(r) * row_bytes, n_cols);
        }
        return out;
    }
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto & b : out) b = static_cast<uint8_t>(byte(rng));
    const auto & info = k::tensor_type_info(t);
    std::uniform_real_distribution<float> scale(0.002f, 0.05f);
    for (const auto & l : scale_layouts()) {
        if (l.type != t) continue;
        const size_t n_blocks = out.size() / info.type_size;
        for (size_t b = 0; b < n_blocks; ++b)
            for (size_t off : l.offsets) {
                const uint16_t h = k::fp32_to_fp16(scale(rng));
                std::memcpy(out.data() + b * info.type_size + off, &h, 2);
            }
        return out;
    }
    FAIL("no scale layout for " << info.name);
    return out;
}

std::vector<float> random_activations(int64_t n_tokens, int64_t n_cols, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n_tokens * n_cols));
    for (auto & v : x) v = nd(rng);
    return x;
}

std::vector<float> matmul_on(int n_threads, const k::weight_view & w, const std::vector<float> & x, int64_t n_tokens) {
    k::thread_pool pool(n_threads);
    k::matmul_context ctx;
    std::vector<float> y(static_cast<size_t>(n_tokens * w.n_rows), std::nanf(""));
    k::matmul(w, x.data(), n_tokens, y.data(), pool, ctx);
    return y;
}

const std::vector<tensor_type> & weight_types() {
    static const std::vector<tensor_type> v = {
        tensor_type::f32,  tensor_type::f16,  tensor_type::bf16, tensor_type::q8_0, tensor_type::q4_0,
        tensor_type::q4_1, tensor_type::q5_0, tensor_type::q5_1, tensor_type::q2_k, tensor_type::q3_k,
        tensor_type::q4_k, tensor_type::q5_k, tensor_type::q6_k, tensor_type::iq4_nl, tensor_type::iq4_xs,
    };
    return v;
}

}  // namespace

TEST_CASE("matmul matches a double-precision reference on dequantized rows, for every weight type",
          "[kernels][matmul]") {
    const int64_t n_tokens = GENERATE(1, 3, 17, 64);
    for (tensor_type wt : weight_types()) {
        if (!k::is_supported(wt)) continue;
        const int64_t block = k::tensor_type_info(wt).block_size;
        const int64_t n_cols = block == 256 ? 512 : (block == 32 ? 96 : 75);   // odd block counts for 32
        const int64_t n_rows = 37;                                             // not a multiple of any tile
        INFO("type " << k::tensor_type_info(wt).name << ", n_tokens " << n_tokens);
        const auto w_bytes = random_weights(wt, n_rows, n_cols, 7);
        const k::weight_view w{wt, w_bytes.data(), n_rows, n_cols, k::row_size(wt, n_cols)};
        const auto x = random_activations(n_tokens, n_cols, 11);
        const auto y = matmul_on(2, w, x, n_tokens);

        // Reference: the weight row and the activation row as the kernel sees them (after the
        // activation's conversion to the vec_dot type), multiplied in double.
        const tensor_type at = k::vec_dot_type(wt);
        std::vector<uint8_t> a_row(k::row_size(at, n_cols));
        std::vector<float> a_deq(static_cast<size_t>(n_cols)), w_deq(static_cast<size_t>(n_cols));
        for (int64_t t = 0; t < n_tokens; ++t) {
            k::quantize_row(at, x.data() + t * n_cols, a_row.data(), n_cols);
            k::dequantize_row(at, a_row.data(), a_deq.data(), n_cols);
            for (int64_t r = 0; r < n_rows; ++r) {
                k::dequantize_row(wt, w_bytes.data() + static_cast<size_t>(r) * w.row_bytes, w_deq.data(), n_cols);
                double want = 0, mag = 0;
                for (int64_t i = 0; i < n_cols; ++i) {
                    want += static_cast<double>(w_deq[i]) * a_deq[i];
                    mag += std::fabs(static_cast<double>(w_deq[i]) * a_deq[i]);
                }
                // f32 accumulation over a row; q8_1 activations also carry each block's sum as an
                // fp16 (rounded by up to 2^-11), which the offset term m * sum multiplies.
                double tol = 1e-5 * mag + 1e-6;
                if (at == tensor_type::q8_1) {
                    const auto * row = w_bytes.data() + static_cast<size_t>(r) * w.row_bytes;
                    const size_t bsize = k::tensor_type_info(wt).type_size;
                    for (int64_t b = 0; b < n_cols / 32; ++b) {
                        uint16_t m_bits;
                        std::memcpy(&m_bits, row + b * bsize + 2, 2);
                        double sum = 0;
                        for (int64_t i = b * 32; i < (b + 1) * 32; ++i) sum += a_deq[i];
                        tol += std::fabs(k::fp16_to_fp32(m_bits) * sum) * 0x1p-11;
                    }
                }
                const float got = y[static_cast<size_t>(t * n_rows + r)];
                INFO("t " << t << " r " << r << " got " << got << " want " << want << " mag " << mag);
                REQUIRE(std::fabs(got - want) <= tol);
            }
        }
    }
}

TEST_CASE("matmul gives bitwise the same result on 1 and 2 threads, and batched rows equal matvecs "
          "(within rounding where tiles take llama.cpp's batch order)", "[kernels][matmul]") {
    const int64_t n_tokens = GENERATE(1, 3, 17, 64);
    for (tensor_type wt : weight_types()) {
        if (!k::is_supported(wt)) continue;
        const int64_t block = k::tensor_type_info(wt).block_size;
        const int64_t n_cols = block == 256 ? 768 : (block == 32 ? 288 : 200);
        const int64_t n_rows = 301;
        INFO("type " << k::tensor_type_info(wt).name << ", n_tokens " << n_tokens);
        const auto w_bytes = random_weights(wt, n_rows, n_cols, 3);
        const k::weight_view w{wt, w_bytes.data(), n_rows, n_cols, k::row_size(wt, n_cols)};
        const auto x = random_activations(n_tokens, n_cols, 5);
        const auto y1 = matmul_on(1, w, x, n_tokens);
        const auto y2 = matmul_on(2, w, x, n_tokens);
        const auto y3 = matmul_on(3, w, x, n_tokens);
        REQUIRE(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float)) == 0);
        REQUIRE(std::memcmp(y1.data(), y3.data(), y1.size() * sizeof(float)) == 0);
        for (float v : y1) REQUIRE(std::isfinite(v));
        if (n_tokens > 1) {
            const int64_t t = n_tokens / 2;
            const std::vector<float> xt(x.begin() + t * n_cols, x.begin() + (t + 1) * n_cols);
            const auto yt = matmul_on(2, w, xt, 1);
            if (!hearth::kernels::cpu::active_quant_kernels()[wt].tile_batch_order) {
                REQUIRE(std::memcmp(yt.data(), y1.data() + t * n_rows, yt.size() * sizeof(float)) == 0);
            } else {
                float scale = 1.0f;   // the f32 rounding of sums that reach about the largest output
                for (float v : yt) scale = std::max(scale, std::fabs(v));
                for (int64_t r = 0; r < n_rows; ++r) REQUIRE(std::fabs(yt[r] - y1[t * n_rows + r]) <= 2e-5f * scale);
            }
        }
    }
}

TEST_CASE("matmul in step order: every token of a batch gets a one-token matvec's bits, every weight type",
          "[kernels][matmul]") {
    const int64_t n_tokens = GENERATE(2, 5, 17);
    for (tensor_type wt : weight_types()) {
        if (!k::is_supported(wt)) continue;
        const int64_t block = k::tensor_type_info(wt).block_size;
        const int64_t n_cols = block == 256 ? 768 : (block == 32 ? 288 : 200);
        const int64_t n_rows = 301;
        INFO("type " << k::tensor_type_info(wt).name << ", n_tokens " << n_tokens);
        const auto w_bytes = random_weights(wt, n_rows, n_cols, 13);
        const k::weight_view w{wt, w_bytes.data(), n_rows, n_cols, k::row_size(wt, n_cols)};
        const auto x = random_activations(n_tokens, n_cols, 15);
        k::thread_pool pool(2);
        k::matmul_context ctx;
        ctx.set_step_order(true);
        std::vector<float> y(static_cast<size_t>(n_tokens * n_rows), std::nanf(""));
        k::matmul(w, x.data(), n_tokens, y.data(), pool, ctx);
        for (int64_t t = 0; t < n_tokens; ++t) {
            const std::vector<float> xt(x.begin() + t * n_cols, x.begin() + (t + 1) * n_cols);
            const auto yt = matmul_on(2, w, xt, 1);
            REQUIRE(std::memcmp(yt.data(), y.data() + t * n_rows, yt.size() * sizeof(float)) == 0);
        }
    }
}

TEST_CASE("matmul_context: one set of activations serves weights of different vec_dot types",
          "[kernels][matmul]") {
    k::thread_pool pool(2);
    const int64_t n_cols = 256, n_rows = 40, n_tokens = 5;
    const auto x = random_activations(n_tokens, n_cols, 9);
    k::matmul_context shared;
    shared.set_activations(x.data(), n_tokens, n_cols);
    // q8_0, q8_K, f16, f32 and bf16 activations in turn, more types than the context keeps at once,
    // then the first again (converted anew after its buffer was reused).
    const tensor_type order[] = {tensor_type::q4_0, tensor_type::q4_k, tensor_type::f16,  tensor_type::f32,
                                 tensor_type::bf16, tensor_type::q4_1, tensor_type::q5_0, tensor_type::q6_k};
    for (tensor_type wt : order) {
        if (!k::is_supported(wt)) continue;
        INFO("type " << k::tensor_type_info(wt).name);
        const auto w_bytes = random_weights(wt, n_rows, n_cols, 21);
        const k::weight_view w{wt, w_bytes.data(), n_rows, n_cols, k::row_size(wt, n_cols)};
        std::vector<float> y_shared(static_cast<size_t>(n_tokens * n_rows));
        k::matmul(w, shared, y_shared.data(), pool);
        const auto y_fresh = matmul_on(2, w, x, n_tokens);
        REQUIRE(std::memcmp(y_shared.data(), y_fresh.data(), y_fresh.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("matmul_group: several weights in one dispatch equal one matmul each, bitwise", "[kernels][matmul]") {
    // As Q, K, V (different row counts, mixed types, one of them q8_K-activated) and gate/up.
    // The larger rows make a matvec's shares cross from one weight to the next and cut each
    // share into many tasks (matmul.cpp, cut_matvec); the NaNs show a row left unwritten.
    const int64_t n_tokens = GENERATE(1, 7, 40);
    const int n_threads = GENERATE(1, 2, 3);
    const bool large = n_tokens == 1;
    k::thread_pool pool(n_threads);
    const int64_t n_cols = 256;
    const auto x = random_activations(n_tokens, n_cols, 11);
    const tensor_type types[] = {tensor_type::q5_0, tensor_type::q8_0, tensor_type::q4_k};
    const int64_t rows[] = {large ? 3001 : 300, 36, large ? 1283 : 128};
    std::vector<std::vector<uint8_t>> bytes;
    std::vector<k::weight_view> ws;
    for (int i = 0; i < 3; ++i) {
        bytes.push_back(random_weights(types[i], rows[i], n_cols, 30 + static_cast<uint32_t>(i)));
        ws.push_back({types[i], bytes.back().data(), rows[i], n_cols, k::row_size(types[i], n_cols)});
    }
    std::vector<std::vector<float>> ys(3);
    std::vector<float *> outs;
    for (int i = 0; i < 3; ++i) {
        ys[static_cast<size_t>(i)].assign(static_cast<size_t>(n_tokens * rows[i]), std::nanf(""));
        outs.push_back(ys[static_cast<size_t>(i)].data());
    }
    k::matmul_context ctx;
    ctx.set_activations(x.data(), n_tokens, n_cols);
    k::matmul_group(ws, ctx, outs, pool);
    for (int i = 0; i < 3; ++i) {
        INFO("weight " << i << ", n_tokens " << n_tokens << ", threads " << n_threads);
        const auto alone = matmul_on(2, ws[static_cast<size_t>(i)], x, n_tokens);
        REQUIRE(std::memcmp(alone.data(), ys[static_cast<size_t>(i)].data(), alone.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("matmul honours a row stride larger than the packed row", "[kernels][matmul]") {
    k::thread_pool pool(2);
    const int64_t n_cols = 64, n_rows = 9, n_tokens = 2;
    const tensor_type wt = tensor_type::q8_0;
    const auto packed = random_weights(wt, n_rows, n_cols, 1);
    const size_t row_bytes = k::row_size(wt, n_cols), stride = row_bytes + 30;
    std::vector<uint8_t> padded(stride * n_rows, 0xAB);
    for (int64_t r = 0; r < n_rows; ++r)
        std::memcpy(padded.data() + r * stride, packed.data() + r * row_bytes, row_bytes);
    const auto x = random_activations(n_tokens, n_cols, 2);
    const auto want = matmul_on(2, {wt, packed.data(), n_rows, n_cols, row_bytes}, x, n_tokens);
    const auto got = matmul_on(2, {wt, padded.data(), n_rows, n_cols, stride}, x, n_tokens);
    REQUIRE(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
}
