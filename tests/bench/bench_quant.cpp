// Quant-kernel benchmarks, per format and per ISA variant (scalar, avx2, neon, ...), on data that
// stays in L2 so they measure the kernels' compute rate, not DRAM (hearth_bench_kernels measures
// matvec against the memory bandwidth):
//   vec_dot      GB/s of weights and time per element, one row at a time (the decode inner loop)
//   vec_dot_tile GFLOP/s for 64 weight rows x 32 tokens (the prefill inner loop)
//   quantize / dequantize  time per element
// Run: build/tests/bench/hearth_bench_quant [--benchmark_filter=q4_K]
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "kernels/cpu/dispatch.h"
#include "kernels/quant.h"

namespace k = hearth::kernels;
using k::tensor_type;
namespace cpu = hearth::kernels::cpu;

namespace {

constexpr int64_t k_n_cols = 4096;

std::vector<uint8_t> random_weights(tensor_type t, int64_t n_rows) {
    // Random bytes with small f16 exponents: the integer kernels' speed does not depend on the values.
    std::vector<uint8_t> w(k::row_size(t, k_n_cols) * n_rows);
    std::mt19937 rng(7);
    for (auto & b : w) b = static_cast<uint8_t>(rng() & 0x3B);
    return w;
}

std::vector<uint8_t> activations(tensor_type wt, int64_t n_tokens) {
    const tensor_type at = cpu::quant_kernels_for(cpu::isa::scalar)[wt].vec_dot_type;
    const size_t rb = k::row_size(at, k_n_cols);
    std::vector<uint8_t> a(rb * n_tokens);
    std::mt19937 rng(11);
    std::normal_distribution<float> dist;
    std::vector<float> x(k_n_cols);
    for (int64_t t = 0; t < n_tokens; ++t) {
        for (auto & v : x) v = dist(rng);
        cpu::quant_kernels_for(cpu::isa::scalar)[at].quantize_row(x.data(), a.data() + t * rb, k_n_cols);
    }
    return a;
}

void bm_vec_dot(benchmark::State & state, tensor_type t, cpu::isa isa) {
    const auto & kern = cpu::quant_kernels_for(isa)[t];
    const size_t rb = k::row_size(t, k_n_cols);
    const int64_t n_rows = std::max<int64_t>(4, (256 << 10) / static_cast<int64_t>(rb));
    const auto w = random_weights(t, n_rows);
    const auto a = activations(t, 1);
    std::vector<float> out(static_cast<size_t>(n_rows));
    for (auto _ : state) {
        kern.vec_dot_rows(k_n_cols, w.data(), rb, a.data(), out.data(), n_rows);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(w.size()));
    state.counters["time_per_element"] = benchmark::Counter(
        static_cast<double>(n_rows * k_n_cols) * static_cast<double>(state.iterations()),
        benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}

void bm_vec_dot_tile(benchmark::State & state, tensor_type t, cpu::isa isa) {
    const auto & kern = cpu::quant_kernels_for(isa)[t];
    constexpr int64_t n_rows = 64, n_tokens = 32;
    const size_t rb = k::row_size(t, k_n_cols);
    const auto w = random_weights(t, n_rows);
    const auto a = activations(t, n_tokens);
    const size_t ab = a.size() / n_tokens;
    std::vector<float> out(n_rows * n_tokens);
    for (auto _ : state) {
        kern.vec_dot_tile(k_n_cols, w.data(), rb, n_rows, a.data(), ab, n_tokens, out.data(), n_rows);
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["GFLOPs"] = benchmark::Counter(2.0 * k_n_cols * n_rows * n_tokens * 1e-9 * static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
}

void bm_convert(benchmark::State & state, tensor_type t, cpu::isa isa, bool quantize) {
    const auto & kern = cpu::quant_kernels_for(isa)[t];
    std::vector<float> x(k_n_cols * 8);
    std::mt19937 rng(3);
    std::normal_distribution<float> dist;
    for (auto & v : x) v = dist(rng);
    std::vector<uint8_t> q(k::row_size(t, static_cast<int64_t>(x.size())));
    cpu::quant_kernels_for(cpu::isa::scalar)[t].quantize_row(x.data(), q.data(), static_cast<int64_t>(x.size()));
    for (auto _ : state) {
        if (quantize) kern.quantize_row(x.data(), q.data(), static_cast<int64_t>(x.size()));
        else kern.dequantize_row(q.data(), x.data(), static_cast<int64_t>(x.size()));
        benchmark::DoNotOptimize(q.data());
        benchmark::DoNotOptimize(x.data());
    }
    state.counters["time_per_element"] = benchmark::Counter(
        static_cast<double>(x.size()) * static_cast<double>(state.iterations()),
        benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}

const tensor_type k_weights[] = {tensor_type::q4_0, tensor_type::q5_0, tensor_type::q8_0, tensor_type::q4_k,
                                 tensor_type::q5_k, tensor_type::q6_k, tensor_type::q2_k, tensor_type::q3_k,
                                 tensor_type::q4_1, tensor_type::q5_1, tensor_type::iq4_nl, tensor_type::iq4_xs,
                                 tensor_type::f16, tensor_type::bf16, tensor_type::f32};
const tensor_type k_activations[] = {tensor_type::q8_0, tensor_type::q8_1, tensor_type::q8_k, tensor_type::f16,
                                     tensor_type::q4_0};

std::string bench_name(std::string_view kind, tensor_type t, cpu::isa isa) {
    std::string s(kind);
    s.append("/").append(k::tensor_type_info(t).name).append("/").append(cpu::isa_name(isa));
    return s;
}

[[maybe_unused]] const bool registered = [] {
    for (cpu::isa isa : cpu::available_isas()) {
        for (tensor_type t : k_weights) {
            benchmark::RegisterBenchmark(bench_name("vec_dot", t, isa).c_str(), bm_vec_dot, t, isa);
            benchmark::RegisterBenchmark(bench_name("vec_dot_tile", t, isa).c_str(), bm_vec_dot_tile, t, isa);
        }
        for (tensor_type t : k_activations) {
            benchmark::RegisterBenchmark(bench_name("quantize", t, isa).c_str(), bm_convert, t, isa, true);
            benchmark::RegisterBenchmark(bench_name("dequantize", t, isa).c_str(), bm_convert, t, isa, false);
        }
    }
    return true;
}();

}  // namespace

BENCHMARK_MAIN();
