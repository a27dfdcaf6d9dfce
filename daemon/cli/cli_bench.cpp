// `hearth bench`: prompt processing (pp) and text generation (tg) speed in tokens/s, like
// llama-bench, plus load time (cold and warm page cache), peak RSS and the memory-bandwidth
// ceiling of generation. `hearth bench trace FILE` replays an editing trace (bench_trace.cpp);
// `hearth bench quality` measures completion quality on real code (bench_quality.cpp);
// `hearth bench editor` the first suggestion in a file just opened, and typing on (bench_editor.cpp);
// `hearth bench next-edit` next-edit predictions on real edit histories (bench_next_edit.cpp).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/cli/cli_bench_editor.h"
#include "daemon/cli/cli_bench_next_edit.h"
#include "daemon/cli/cli_bench_quality.h"
#include "daemon/bench/bench_stats.h"
#include "daemon/cli/cli_bench_trace.h"
#include "daemon/cli/cli_commands.h"
#include "daemon/cli/gpu_probe.h"
#include "daemon/engine/model_path.h"
#include "inference/device/layer_device.h"
#include "inference/load/loaded_model.h"
#include "inference/session/sequence.h"
#include "kernels/memory_bandwidth.h"

namespace hearth::daemon {
namespace {

using clock_type = std::chrono::steady_clock;

std::vector<int> parse_int_list(const std::string & s) {
    std::vector<int> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(std::stoi(item));
    return out;
}

std::vector<std::string> parse_list(const std::string & s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

struct stat_pair {
    double mean = 0, sd = 0;
};

stat_pair mean_sd(const std::vector<double> & v) {
    stat_pair s;
    if (v.empty()) return s;
    for (double x : v) s.mean += x;
    s.mean /= static_cast<double>(v.size());
    for (double x : v) s.sd += (x - s.mean) * (x - s.mean);
    s.sd = v.size() > 1 ? std::sqrt(s.sd / static_cast<double>(v.size() - 1)) : 0;
    return s;
}

// Drops the file's pages from the page cache so the next load reads the disk (cold start).
void drop_from_page_cache(const std::string & path) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

double load_seconds(const inference::load_options & opts) {
    const auto t0 = clock_type::now();
    auto lm = inference::loaded_model::load(opts);
    return lm ? std::chrono::duration<double>(clock_type::now() - t0).count() : -1;
}

// Weight bytes a decode step reads: every matrix once, the embedding table only for its
// one row unless it doubles as the output matrix.
uint64_t weight_bytes_per_token(const inference::loaded_model & lm) {
    uint64_t total = lm.file().tensor_data_bytes();
    const auto * embd = lm.file().find_tensor("token_embd.weight");
    if (embd && lm.file().find_tensor("output.weight")) total -= embd->size_bytes;
    return total;
}

// A same-priority busy loop on another core for the contention runs (not niced: a niced one
// would hide exactly the problem we measure).
struct busy_neighbour {
    pid_t pid = -1;
    busy_neighbour() {
        pid = ::fork();
        if (pid == 0) {
            volatile uint64_t x = 0;
            for (;;) x = x + 1;
        }
    }
    ~busy_neighbour() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
};

// The bench's own peak RSS without its bandwidth probes (whose 1 GiB buffer would otherwise be
// the peak): the kernel's high-water mark is read before each probe and reset after it
// (/proc/self/clear_refs "5"); where that reset is unavailable, the plain peak is reported.
class peak_rss_tracker {
public:
    // Call right before a bandwidth probe.
    void before_probe() { peak_kib_ = std::max(peak_kib_, read_hwm_kib()); }
    // Call right after it.
    void after_probe() {
        std::ofstream f("/proc/self/clear_refs");
        f << "5";
        f.flush();
        if (!f) reset_failed_ = true;
    }
    double peak_mib() {
        before_probe();
        if (reset_failed_) {
            rusage ru{};
            getrusage(RUSAGE_SELF, &ru);
            return static_cast<double>(ru.ru_maxrss) / 1024.0;
        }
        return static_cast<double>(peak_kib_) / 1024.0;
    }

private:
    static uint64_t read_hwm_kib() {
        std::ifstream f("/proc/self/status");
        std::string line;
        while (std::getline(f, line))
            if (line.rfind("VmHWM:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
        return 0;
    }
    uint64_t peak_kib_ = 0;
    bool reset_failed_ = false;
};

struct bench_row {
    std::string test;        // "pp512", "tg128"
    int threads = 0;
    std::string cache_type;
    bool busy = false;
    stat_pair tps;           // tokens/s
    // tg only: the median over repetitions of tokens/s against the tg limit worked out from a
    // bandwidth measurement taken right before each repetition (the machine's bandwidth drifts
    // by a third between minutes, so one figure for the whole run would misstate the share).
    double share_of_limit = 0;
};

std::vector<inference::token_id> random_tokens(int n, int32_t n_vocab, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int32_t> pick(0, n_vocab - 1);
    std::vector<inference::token_id> t(static_cast<size_t>(n));
    for (auto & x : t) x = pick(rng);
    return t;
}

// A sequence with `depth` random tokens already evaluated (untimed), as llama-bench's -d: the
// test then measures what attention over a long context costs.
inference::sequence at_depth(inference::engine & eng, const inference::kv_types & ct, int depth, int room, uint64_t seed,
                             std::vector<inference::token_id> & prefix) {
    inference::sequence seq(eng.make_cache(ct, depth + room));
    prefix = random_tokens(depth, eng.mdl().hp().n_vocab, seed ^ 0xdeadbeefull);
    std::vector<float> logits;
    if (depth > 0) (void)inference::prefill(eng, seq, prefix, logits, /*reuse=*/false);
    return seq;
}

double run_pp(inference::engine & eng, const inference::kv_types & ct, int n, uint64_t seed, int depth) {
    std::vector<inference::token_id> toks;
    inference::sequence seq = at_depth(eng, ct, depth, n + 1, seed, toks);
    const auto more = random_tokens(n, eng.mdl().hp().n_vocab, seed);
    toks.insert(toks.end(), more.begin(), more.end());
    std::vector<float> logits;
    const auto t0 = clock_type::now();
    (void)inference::prefill(eng, seq, toks, logits, /*reuse=*/true);   // keeps the depth, evaluates the n
    return n / std::chrono::duration<double>(clock_type::now() - t0).count();
}

double run_tg(inference::engine & eng, const inference::kv_types & ct, int n, uint64_t seed, int depth) {
    std::vector<inference::token_id> prefix;
    inference::sequence seq = at_depth(eng, ct, depth, n + 2, seed, prefix);
    const auto toks = random_tokens(n + 1, eng.mdl().hp().n_vocab, seed);
    std::vector<float> logits;
    (void)inference::decode_one(eng, seq, toks[0], logits);
    const auto t0 = clock_type::now();
    for (int i = 1; i <= n; ++i) (void)inference::decode_one(eng, seq, toks[static_cast<size_t>(i)], logits);
    return n / std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace

void add_bench_commands(CLI::App & app, cli_state & state) {
    auto * bench = app.add_subcommand("bench", "Measure prompt processing and generation speed (tokens/s)");
    struct flags {
        std::string model, threads = "2", pp = "128,512", tg = "64,128", cache_types = "q8_0,f16", depths = "0", gpu_layers = inference::k_default_gpu_layers;
        int reps = 3;
        bool json = false, busy = false;
    };
    auto * f = new flags;
    bench->add_option("-m,--model", f->model, "GGUF model file (default: the downloaded default model)");
    bench->add_option("-t,--threads", f->threads, "thread counts, comma-separated")->capture_default_str();
    bench->add_option("-p,--n-prompt", f->pp, "prompt sizes for pp, comma-separated (empty: none)")->capture_default_str();
    bench->add_option("-n,--n-gen", f->tg, "generation lengths for tg, comma-separated (empty: none)")->capture_default_str();
    bench->add_option("--cache-type", f->cache_types, "KV cache types, comma-separated (a pair as K/V: f16/q8_0)")->capture_default_str();
    bench->add_option("-d,--depth", f->depths, "context depths, comma-separated: each test runs after this many tokens "
                      "already in the cache (named pp512@d4096)")->capture_default_str();
    bench->add_option("-r,--repetitions", f->reps, "repetitions of each test")->capture_default_str();
    bench->add_option("--gpu-layers", f->gpu_layers, "the last layers to run on a GPU: N, all or auto (a real GPU only; 0: none)")->capture_default_str();
    bench->add_flag("--busy", f->busy, "also measure with a same-priority busy process on another core");
    bench->add_flag("--json", f->json, "print the results as JSON");
    add_bench_trace_command(*bench, state);
    add_bench_quality_command(*bench, state);
    add_bench_editor_command(*bench, state);
    add_bench_next_edit_command(*bench, state);

    bench->callback([&state, f, bench] {
        if (bench->get_subcommands().size() > 0) return;  // `bench trace` or `bench quality` ran instead
        auto path = resolve_model_path(f->model);
        if (!path) { std::fprintf(stderr, "hearth bench: %s\n", path.message().c_str()); state.exit_code = 2; return; }
        std::vector<int> threads, pps, tgs, depths;
        try {
            threads = parse_int_list(f->threads);
            pps = parse_int_list(f->pp);
            tgs = parse_int_list(f->tg);
            depths = parse_int_list(f->depths);
        } catch (const std::exception &) {
            std::fprintf(stderr, "hearth bench: -t, -p, -n and -d take comma-separated numbers\n");
            state.exit_code = 2;
            return;
        }
        if (depths.empty() || std::any_of(depths.begin(), depths.end(), [](int d) { return d < 0; })) {
            std::fprintf(stderr, "hearth bench: -d takes depths of 0 or more tokens\n");
            state.exit_code = 2;
            return;
        }
        if (f->reps < 1 || threads.empty()) { std::fprintf(stderr, "hearth bench: need -r >= 1 and at least one thread count\n"); state.exit_code = 2; return; }

        inference::load_options opts;
        opts.model_path = *path;
        opts.cache_type = "f16";
        opts.gpu_layers = "0";   // the load is timed; the device, if any, is set up below
        drop_from_page_cache(*path);
        const double t_cold = load_seconds(opts);
        const double t_warm = load_seconds(opts);
        auto lm = inference::loaded_model::load(opts);
        if (!lm) { std::fprintf(stderr, "hearth bench: %s\n", lm.message().c_str()); state.exit_code = 1; return; }
        const auto & mdl = (*lm)->mdl();
        const uint64_t bytes_per_token = weight_bytes_per_token(**lm);
        peak_rss_tracker rss;
        std::vector<double> bws;
        // One full measurement now, a shorter one before each tg repetition (see
        // bench_row::share_of_limit).
        auto bandwidth_now = [&](size_t bytes, int passes) {
            rss.before_probe();
            bws.push_back(kernels::measure_read_bandwidth_gbs((*lm)->pool(), bytes, passes));
            rss.after_probe();
            return bws.back();
        };
        bandwidth_now(size_t{1} << 30, 3);

        auto gpu = inference::parse_gpu_layers(f->gpu_layers);
        if (!gpu) { std::fprintf(stderr, "hearth bench: %s\n", gpu.message().c_str()); state.exit_code = 2; return; }
        // `auto` asks once whether there is a GPU (a child process, daemon/cli/gpu_probe.h).
        const auto no_gpu = gpu->how == inference::gpu_layers::kind::automatic ? probe_no_gpu() : std::nullopt;
        std::vector<bench_row> rows;
        for (const bool busy : f->busy ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
            std::unique_ptr<busy_neighbour> neighbour;
            if (busy) neighbour = std::make_unique<busy_neighbour>();
            for (int nt : threads) {
                kernels::thread_pool pool(nt);
                inference::engine eng(mdl, pool, 512);
                if (no_gpu) {
                    std::fprintf(stderr, "hearth bench: --gpu-layers auto: none (%s)\n", no_gpu->c_str());
                } else if (gpu->how != inference::gpu_layers::kind::count || gpu->n > 0) {
                    const int n_ctx = (pps.empty() ? 0 : *std::max_element(pps.begin(), pps.end())) + (tgs.empty() ? 0 : *std::max_element(tgs.begin(), tgs.end())) + *std::max_element(depths.begin(), depths.end()) + 16;
                    auto dev = inference::make_layer_device(mdl, *gpu, {n_ctx, 1, eng.n_batch()});
                    std::fprintf(stderr, "hearth bench: %s\n", dev ? inference::describe(dev->plan).c_str() : dev.message().c_str());
                    if (dev) eng.set_layer_device(std::move(dev->device));
                }
                for (const auto & ct_name : parse_list(f->cache_types)) {
                    auto ct = inference::parse_cache_types(ct_name);
                    if (!ct) { std::fprintf(stderr, "hearth bench: %s\n", ct.message().c_str()); state.exit_code = 2; return; }
                    if (auto s = inference::check_cache_types(*ct, mdl.hp().head_dim); !s) { std::fprintf(stderr, "hearth bench: %s\n", s.message().c_str()); state.exit_code = 2; return; }
                    auto measure = [&](const std::string & name, auto fn, int n, int depth) {
                        fn(eng, *ct, std::min(n, 16), 1, 0);  // warm-up: page in weights, grow buffers
                        std::vector<double> v, shares;
                        for (int r = 0; r < f->reps; ++r) {
                            // The limit counts the weights only: at depth the KV cache is read too.
                            const double limit = name == "tg" && depth == 0 ? bandwidth_now(size_t{256} << 20, 2) * 1e9 / static_cast<double>(bytes_per_token) : 0;
                            v.push_back(fn(eng, *ct, n, 100 + r, depth));
                            if (limit > 0) shares.push_back(v.back() / limit);
                        }
                        const std::string test = name + std::to_string(n) + (depth > 0 ? "@d" + std::to_string(depth) : "");
                        rows.push_back({test, nt, ct_name, busy, mean_sd(v), percentile(shares, 0.5)});
                        if (!f->json) {
                            std::printf("%-12s threads %d  cache %-8s %s %9.2f ± %.2f t/s", rows.back().test.c_str(), nt,
                                        ct_name.c_str(), busy ? "busy-neighbour" : "idle          ", rows.back().tps.mean, rows.back().tps.sd);
                            if (!shares.empty()) std::printf("  (%.0f %% of the bandwidth limit)", 100 * rows.back().share_of_limit);
                            std::printf("\n");
                        }
                        std::fflush(stdout);
                    };
                    for (int depth : depths) {
                        for (int n : pps) measure("pp", run_pp, n, depth);
                        for (int n : tgs) measure("tg", run_tg, n, depth);
                    }
                }
            }
        }
        const double bw = percentile(bws, 0.5);
        const double bw_min = *std::min_element(bws.begin(), bws.end());
        const double bw_max = *std::max_element(bws.begin(), bws.end());
        const double tg_limit = bw * 1e9 / static_cast<double>(bytes_per_token);
        const double peak_rss_mib = rss.peak_mib();
        if (f->json) {
            boost::json::object o;
            o["model"] = *path;
            o["load_cold_s"] = t_cold;
            o["load_warm_s"] = t_warm;
            o["peak_rss_mib"] = peak_rss_mib;
            o["read_bandwidth_gbs"] = bw;
            o["read_bandwidth_min_gbs"] = bw_min;
            o["read_bandwidth_max_gbs"] = bw_max;
            o["weight_bytes_per_token"] = bytes_per_token;
            o["tg_bandwidth_limit_tps"] = tg_limit;
            boost::json::array results;
            for (const auto & r : rows)
                results.push_back({{"test", r.test}, {"threads", r.threads}, {"cache_type", r.cache_type}, {"busy_neighbour", r.busy},
                                   {"tokens_per_s", r.tps.mean}, {"sd", r.tps.sd}, {"repetitions", f->reps},
                                   {"share_of_bandwidth_limit", r.share_of_limit}});
            o["results"] = std::move(results);
            std::printf("%s\n", boost::json::serialize(o).c_str());
        } else {
            std::printf("load: cold %.3f s, warm %.3f s; peak RSS %.1f MiB\n", t_cold, t_warm, peak_rss_mib);
            std::printf("read bandwidth %.2f GB/s (median of %zu measurements, %.2f-%.2f); weights read per token %.1f MiB"
                        " -> tg limit %.1f t/s\n",
                        bw, bws.size(), bw_min, bw_max, static_cast<double>(bytes_per_token) / (1 << 20), tg_limit);
        }
        state.exit_code = 0;
    });
}

}  // namespace hearth::daemon
