// Kernel benchmarks: the machine's int8 multiply-add peak, its memory read bandwidth, matvec throughput per weight format (in
// GB/s of weights read, and as a share of the measured bandwidth), prefill matmul GFLOP/s (4096 x
// 4096, and q5_0 at the default model's shapes), and two threads against one while a
// same-priority busy process holds a core.
// Matvec matrices are 4096 x 4096, cycled through enough copies (>= 256 MiB) that every pass
// reads DRAM rather than the last-level cache. Run: build/tests/bench/hearth_bench_kernels
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include "kernels/attention.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/fp16.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "kernels/thread_pool.h"
#include "tests/bench/int8_peak.h"

namespace k = hearth::kernels;
using k::tensor_type;

namespace {

constexpr int64_t k_dim = 4096;
constexpr size_t k_min_stream_bytes = size_t{256} << 20;

// CPU seconds used by every thread of this process: on a shared machine, work per CPU-second
// shows a kernel's speed even when other processes take cores away (wall time does not).
double process_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

k::thread_pool & pool_of(int n_threads) {
    static k::thread_pool one(1), two(2);
    return n_threads == 1 ? one : two;
}

uint64_t xorshift(uint64_t & s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

// Byte offsets of the fp16 scales in one block (kernels/blocks.h), set to sane values so the
// arithmetic is on normal numbers, as in a real model.
std::vector<size_t> scale_offsets(tensor_type t) {
    switch (t) {
    case tensor_type::q4_0: case tensor_type::q5_0: case tensor_type::q8_0: return {0};
    case tensor_type::q4_k: case tensor_type::q5_k: return {0, 2};
    case tensor_type::q6_k: return {208};
    default: return {};
    }
}

// `copies` identical random n_rows x n_cols matrices of type t, back to back.
std::unique_ptr<uint8_t[]> make_weights(tensor_type t, size_t copies, size_t & matrix_bytes, int64_t n_rows = k_dim,
                                        int64_t n_cols = k_dim) {
    const size_t row_bytes = k::row_size(t, n_cols);
    matrix_bytes = row_bytes * static_cast<size_t>(n_rows);
    std::unique_ptr<uint8_t[]> w(new uint8_t[matrix_bytes * copies]);
    uint64_t s = 0x9E3779B97F4A7C15ull;
    if (t == tensor_type::f16 || t == tensor_type::f32) {
        std::vector<float> row(static_cast<size_t>(n_cols));
        for (int64_t r = 0; r < n_rows; ++r) {
            for (auto & v : row) v = static_cast<float>(static_cast<int64_t>(xorshift(s) % 2001) - 1000) * 1e-4f;
            k::quantize_row(t, row.data(), w.get() + r * row_bytes, n_cols);
        }
    } else {
        for (size_t i = 0; i < matrix_bytes; i += 8) {
            const uint64_t v = xorshift(s);
            std::memcpy(w.get() + i, &v, std::min<size_t>(8, matrix_bytes - i));
        }
        const size_t block_bytes = k::tensor_type_info(t).type_size;
        const uint16_t scale = k::fp32_to_fp16(0.01f);
        for (size_t b = 0; b < matrix_bytes / block_bytes; ++b)
            for (size_t off : scale_offsets(t)) std::memcpy(w.get() + b * block_bytes + off, &scale, 2);
    }
    for (size_t c = 1; c < copies; ++c) std::memcpy(w.get() + c * matrix_bytes, w.get(), matrix_bytes);
    return w;
}

std::vector<float> make_activations(int64_t n_tokens, int64_t n_cols = k_dim) {
    std::vector<float> x(static_cast<size_t>(n_tokens * n_cols));
    std::mt19937 rng(1);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (auto & v : x) v = nd(rng);
    return x;
}

// Sums a buffer as fast as the cores can load it: the read bandwidth a matvec can hope for.
uint64_t stream_sum(const uint64_t * data, size_t n_words, k::thread_pool & pool) {
    constexpr size_t k_chunk_words = (size_t{4} << 20) / 8;
    std::vector<uint64_t> partial(static_cast<size_t>(pool.n_threads()) * 8, 0);
    const auto n_chunks = static_cast<int64_t>((n_words + k_chunk_words - 1) / k_chunk_words);
    pool.parallel_for(n_chunks, [&](int64_t c, int ti) {
        const uint64_t * p = data + static_cast<size_t>(c) * k_chunk_words;
        const size_t n = std::min(k_chunk_words, n_words - static_cast<size_t>(c) * k_chunk_words);
        uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (size_t i = 0; i + 4 <= n; i += 4) {
            a0 += p[i];
            a1 += p[i + 1];
            a2 += p[i + 2];
            a3 += p[i + 3];
        }
        partial[static_cast<size_t>(ti) * 8] += a0 + a1 + a2 + a3;
    });
    uint64_t s = 0;
    for (uint64_t v : partial) s += v;
    return s;
}

struct big_buffer {
    static constexpr size_t k_bytes = size_t{1} << 30;
    std::unique_ptr<uint64_t[]> data{new uint64_t[k_bytes / 8]};
    big_buffer() {
        for (size_t i = 0; i < k_bytes / 8; ++i) data[i] = i;   // touch every page
    }
};

big_buffer & bandwidth_buffer() {
    static big_buffer b;
    return b;
}

// Read bandwidth in GB/s with n threads (best of three passes), measured once per thread count.
double measured_bandwidth(int n_threads) {
    static double cached[3] = {0, 0, 0};
    if (cached[n_threads] > 0) return cached[n_threads];
    auto & b = bandwidth_buffer();
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(stream_sum(b.data.get(), big_buffer::k_bytes / 8, pool_of(n_threads)));
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::max(best, static_cast<double>(big_buffer::k_bytes) / s * 1e-9);
    }
    return cached[n_threads] = best;
}

void BM_read_bandwidth(benchmark::State & state) {
    const int n_threads = static_cast<int>(state.range(0));
    auto & b = bandwidth_buffer();
    for (auto _ : state) benchmark::DoNotOptimize(stream_sum(b.data.get(), big_buffer::k_bytes / 8, pool_of(n_threads)));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(big_buffer::k_bytes));
}

// The int8 multiply-add peak on every pool thread: what a prefill tile could reach if nothing
// but its multiply-adds cost. GOPS counts 2 ops per multiply-add, as GFLOPs does for matmuls.
void run_int8_peak(benchmark::State & state, k::cpu::isa isa, int n_threads) {
    const auto isas = k::cpu::available_isas();
    if (std::find(isas.begin(), isas.end(), isa) == isas.end()) {
        state.SkipWithError("this CPU lacks the instructions");
        return;
    }
#if HEARTH_BENCH_INT8_PEAK_X86
    const bool vnni = isa == k::cpu::isa::avx512_vnni;
    const int64_t macs_per_iter = vnni ? hearth::bench::k_int8_peak_macs_per_iter_avx512
                                       : hearth::bench::k_int8_peak_macs_per_iter_avx2;
    constexpr int64_t k_iters = int64_t{1} << 16;   // ~0.1-0.3 ms per thread
    auto & pool = pool_of(n_threads);
    std::vector<int32_t> sink(static_cast<size_t>(n_threads));
    const double cpu0 = process_cpu_s();
    for (auto _ : state) {
        pool.run([&](int ti, int) {
            sink[static_cast<size_t>(ti)] = vnni ? hearth::bench::int8_peak_avx512_vnni(k_iters)
                                                 : hearth::bench::int8_peak_avx2(k_iters);
        });
        benchmark::DoNotOptimize(sink.data());
    }
    const double cpu_s = process_cpu_s() - cpu0;
    const double gop = 2.0 * static_cast<double>(macs_per_iter * k_iters * n_threads) * 1e-9 *
                       static_cast<double>(state.iterations());
    state.counters["GOPS"] = benchmark::Counter(gop, benchmark::Counter::kIsRate);
    state.counters["GOP_per_cpu_s"] = gop / cpu_s;
#else
    (void)n_threads;
    state.SkipWithError("the int8 peak is built for x86-64 only");
#endif
}

// One token through copies of a 4096 x 4096 matrix in turn: a decode step's weight streaming.
void run_matvec(benchmark::State & state, tensor_type t, int n_threads) {
    if (!k::is_supported(t)) {
        state.SkipWithError("type not supported by this build");
        return;
    }
    size_t matrix_bytes = 0;
    const size_t copies = std::max<size_t>(2, k_min_stream_bytes / (k::row_size(t, k_dim) * k_dim) + 1);
    const auto w = make_weights(t, copies, matrix_bytes);
    const auto x = make_activations(1);
    std::vector<float> y(k_dim);
    k::matmul_context ctx;
    ctx.set_activations(x.data(), 1, k_dim);
    auto & pool = pool_of(n_threads);
    pool.reset_stats();
    size_t c = 0;
    for (auto _ : state) {
        const k::weight_view view{t, w.get() + c * matrix_bytes, k_dim, k_dim, k::row_size(t, k_dim)};
        k::matmul(view, ctx, y.data(), pool);
        benchmark::DoNotOptimize(y.data());
        c = (c + 1) % copies;
    }
    const auto stats = pool.get_stats();
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * matrix_bytes));
    const double bw = measured_bandwidth(n_threads);
    state.counters["bw_GBps"] = bw;
    state.counters["share_of_bw"] = benchmark::Counter(static_cast<double>(state.iterations() * matrix_bytes) * 1e-9 / bw,
                                                       benchmark::Counter::kIsRate);
    state.counters["idle"] = stats.idle_fraction();
}

// n_tokens tokens through one n_rows x n_cols matrix (4096 x 4096 unless named): prefill.
void run_prefill(benchmark::State & state, tensor_type t, int64_t n_tokens, int n_threads, int64_t n_rows = k_dim,
                 int64_t n_cols = k_dim) {
    if (!k::is_supported(t)) {
        state.SkipWithError("type not supported by this build");
        return;
    }
    size_t matrix_bytes = 0;
    const auto w = make_weights(t, 1, matrix_bytes, n_rows, n_cols);
    const auto x = make_activations(n_tokens, n_cols);
    std::vector<float> y(static_cast<size_t>(n_tokens * n_rows));
    k::matmul_context ctx;
    auto & pool = pool_of(n_threads);
    pool.reset_stats();
    const k::weight_view view{t, w.get(), n_rows, n_cols, k::row_size(t, n_cols)};
    const double cpu0 = process_cpu_s();
    for (auto _ : state) {
        k::matmul(view, x.data(), n_tokens, y.data(), pool, ctx);   // includes converting the activations
        benchmark::DoNotOptimize(y.data());
    }
    const double cpu_s = process_cpu_s() - cpu0;
    const double gflop = 2.0 * static_cast<double>(n_rows * n_cols * n_tokens) * 1e-9 * static_cast<double>(state.iterations());
    state.counters["GFLOPs"] = benchmark::Counter(gflop, benchmark::Counter::kIsRate);
    state.counters["GFLOP_per_cpu_s"] = gflop / cpu_s;
    state.counters["idle"] = pool.get_stats().idle_fraction();
}

// A same-priority process spinning on one core for the lifetime of this object.
struct busy_neighbour {
    pid_t pid = -1;
    busy_neighbour() {
        pid = fork();
        if (pid == 0) {
            volatile uint64_t n = 0;
            for (;;) n = n + 1;
        }
    }
    ~busy_neighbour() {
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
        }
    }
};

void BM_matvec_busy_neighbour(benchmark::State & state) {
    const auto t = static_cast<tensor_type>(state.range(0));
    busy_neighbour busy;
    run_matvec(state, t, static_cast<int>(state.range(1)));
}

// Query heads, KV heads and head_dim of one layer, and the model's layers.
struct attention_shape {
    int64_t n_head, n_head_kv, head_dim, n_layer;
};
constexpr attention_shape k_shape_05b{14, 2, 64, 1};     // the default 0.5B model, one layer
constexpr attention_shape k_shape_15b{12, 2, 128, 28};   // the 1.5B model, every layer

// Attention of n_tokens queries over n_kv cached positions: a decode step (1 token) or a
// prefill batch (causal, its last token seeing all n_kv). With n_layer > 1 each iteration
// takes the next layer's cache (copies of one at other addresses), so that the cache comes
// from memory as in a forward pass, not from the L3 that one layer's fits in.
void run_attention(benchmark::State & state, tensor_type t, attention_shape shape, int64_t n_tokens, int32_t n_kv,
                   int n_threads) {
    const int64_t n_head = shape.n_head, n_head_kv = shape.n_head_kv, head_dim = shape.head_dim;
    const int64_t width = n_head_kv * head_dim;
    const size_t row_bytes = k::row_size(t, width);
    std::vector<uint8_t> kc(row_bytes * static_cast<size_t>(n_kv)), vc(kc.size());
    std::vector<float> row(static_cast<size_t>(width));
    std::mt19937 rng(3);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int32_t p = 0; p < n_kv; ++p) {
        for (auto & v : row) v = nd(rng);
        k::quantize_row(t, row.data(), kc.data() + static_cast<size_t>(p) * row_bytes, width);
        for (auto & v : row) v = nd(rng);
        k::quantize_row(t, row.data(), vc.data() + static_cast<size_t>(p) * row_bytes, width);
    }
    std::vector<float> q(static_cast<size_t>(n_tokens * n_head * head_dim)), out(q.size());
    for (auto & v : q) v = nd(rng);
    std::vector<int32_t> n_kv_t(static_cast<size_t>(n_tokens));
    for (int64_t i = 0; i < n_tokens; ++i) n_kv_t[static_cast<size_t>(i)] = n_kv - static_cast<int32_t>(n_tokens - 1 - i);
    std::vector<std::vector<uint8_t>> layers_k(static_cast<size_t>(shape.n_layer), kc), layers_v(layers_k.size(), vc);
    auto & pool = pool_of(n_threads);
    const double cpu0 = process_cpu_s();
    size_t layer = 0;
    for (auto _ : state) {
        const k::kv_view kv{{t, layers_k[layer].data(), row_bytes}, {t, layers_v[layer].data(), row_bytes}};
        layer = (layer + 1) % layers_k.size();
        k::attention(q.data(), n_tokens, n_kv_t.data(), kv, n_head, n_head_kv, head_dim, 0.125f, out.data(), pool);
        benchmark::DoNotOptimize(out.data());
    }
    const double cpu_s = process_cpu_s() - cpu0;
    // Each (token, head, visible position) costs a head_dim dot with K and a head_dim axpy with V.
    double pairs = 0;
    for (int32_t n : n_kv_t) pairs += n;
    const double gflop = 4.0 * head_dim * n_head * pairs * 1e-9 * static_cast<double>(state.iterations());
    state.counters["GFLOPs"] = benchmark::Counter(gflop, benchmark::Counter::kIsRate);
    state.counters["GFLOP_per_cpu_s"] = gflop / cpu_s;
}

// The fixed cost of one parallel op: an empty run() on 2 threads (the worker spinning, as it is
// between the ops of a forward pass).
void BM_pool_empty_run(benchmark::State & state) {
    auto & pool = pool_of(2);
    for (auto _ : state) pool.run([](int, int) {});
}

struct type_name {
    tensor_type t;
    const char * name;
};
constexpr type_name k_matvec_types[] = {
    {tensor_type::q4_k, "q4_K"}, {tensor_type::q6_k, "q6_K"}, {tensor_type::q8_0, "q8_0"},
    {tensor_type::q5_0, "q5_0"}, {tensor_type::q4_0, "q4_0"}, {tensor_type::f16, "f16"},
};
constexpr type_name k_prefill_types[] = {
    {tensor_type::q4_k, "q4_K"}, {tensor_type::q8_0, "q8_0"}, {tensor_type::q5_0, "q5_0"},
    {tensor_type::q6_k, "q6_K"}, {tensor_type::q4_0, "q4_0"}, {tensor_type::f16, "f16"},
};

const bool registered = [] {
    benchmark::RegisterBenchmark("pool_empty_run/threads:2", BM_pool_empty_run)->UseRealTime();
    for (auto isa : {k::cpu::isa::avx512_vnni, k::cpu::isa::avx2})
        for (int nt : {1, 2})
            benchmark::RegisterBenchmark(("int8_peak/" + std::string(k::cpu::isa_name(isa)) + "/threads:" + std::to_string(nt)).c_str(),
                                         [isa, nt](benchmark::State & s) { run_int8_peak(s, isa, nt); })
                ->UseRealTime()->MinTime(0.5);
    benchmark::RegisterBenchmark("read_bandwidth_1GiB/threads:1", BM_read_bandwidth)->Arg(1)->UseRealTime()->MinTime(1.0);
    benchmark::RegisterBenchmark("read_bandwidth_1GiB/threads:2", BM_read_bandwidth)->Arg(2)->UseRealTime()->MinTime(1.0);
    for (const auto & tn : k_matvec_types)
        for (int nt : {1, 2})
            benchmark::RegisterBenchmark((std::string("matvec_4096/") + tn.name + "/threads:" + std::to_string(nt)).c_str(),
                                         [tn, nt](benchmark::State & s) { run_matvec(s, tn.t, nt); })
                ->UseRealTime()->MinTime(1.0);
    for (const auto & tn : k_prefill_types)
        for (int64_t n : {32, 512})
            benchmark::RegisterBenchmark((std::string("prefill_4096/") + tn.name + "/tokens:" + std::to_string(n) + "/threads:2").c_str(),
                                         [tn, n](benchmark::State & s) { run_prefill(s, tn.t, n, 2); })
                ->UseRealTime()->MinTime(2.0)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("prefill_4096/q5_0/tokens:512/threads:1", [](benchmark::State & s) { run_prefill(s, tensor_type::q5_0, 512, 1); })
        ->UseRealTime()->MinTime(2.0)->Unit(benchmark::kMillisecond);
    // The default model's q5_0 matrices (Qwen2.5-Coder-0.5B Q4_K_M: rows x 896 columns), as its
    // prefill batches them (attn_output has attn_q's shape, ffn_gate ffn_up's): against
    // prefill_4096/q5_0, what narrow rows and short matrices cost.
    struct shape {
        const char * name;
        int64_t n_rows, n_cols;
    };
    for (const shape sh : {shape{"attn_q", 896, 896}, shape{"attn_k", 128, 896}, shape{"ffn_up", 4864, 896}})
        for (int64_t n : {32, 128, 256, 512})   // 256: the engine's batch
            for (int nt : {1, 2})
                benchmark::RegisterBenchmark((std::string("prefill_shape/q5_0/") + sh.name + ":" + std::to_string(sh.n_rows) + "x" +
                                              std::to_string(sh.n_cols) + "/tokens:" + std::to_string(n) + "/threads:" + std::to_string(nt)).c_str(),
                                             [sh, n, nt](benchmark::State & s) { run_prefill(s, tensor_type::q5_0, n, nt, sh.n_rows, sh.n_cols); })
                    ->UseRealTime()->MinTime(0.5)->Unit(benchmark::kMillisecond);
    for (int nt : {1, 2})
        benchmark::RegisterBenchmark(("matvec_4096_busy_neighbour/q8_0/threads:" + std::to_string(nt)).c_str(),
                                     BM_matvec_busy_neighbour)
            ->Args({static_cast<int64_t>(tensor_type::q8_0), nt})->UseRealTime()->MinTime(2.0);
    for (tensor_type t : {tensor_type::f16, tensor_type::q8_0, tensor_type::q4_0}) {
        const std::string name = k::tensor_type_info(t).name.data();
        benchmark::RegisterBenchmark(("attention_decode/" + name + "/n_kv:4096/threads:2").c_str(),
                                     [t](benchmark::State & s) { run_attention(s, t, k_shape_05b, 1, 4096, 2); })
            ->UseRealTime()->MinTime(1.0)->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("attention_decode/" + name + "/head_dim:128/n_kv:4096/layers:28/threads:2").c_str(),
                                     [t](benchmark::State & s) { run_attention(s, t, k_shape_15b, 1, 4096, 2); })
            ->UseRealTime()->MinTime(1.0)->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("attention_prefill/" + name + "/tokens:512/threads:2").c_str(),
                                     [t](benchmark::State & s) { run_attention(s, t, k_shape_05b, 512, 512, 2); })
            ->UseRealTime()->MinTime(1.0)->Unit(benchmark::kMillisecond);
        // A prefill batch after 4096 cached positions (compare-llamacpp's pp512 at depth 4096).
        benchmark::RegisterBenchmark(("attention_prefill/" + name + "/head_dim:128/tokens:512/n_kv:4608/layers:28/threads:2").c_str(),
                                     [t](benchmark::State & s) { run_attention(s, t, k_shape_15b, 512, 4608, 2); })
            ->UseRealTime()->MinTime(1.0)->Unit(benchmark::kMillisecond);
    }
    return true;
}();

}  // namespace

BENCHMARK_MAIN();
