#include "daemon/cli/cli_bench_trace.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "daemon/bench/bench_stats.h"
#include "daemon/bench/edit_trace.h"
#include "daemon/bench/trace_replay.h"
#include "daemon/engine/model_path.h"
#include "daemon/engine/model_service.h"
#include "daemon/settings/config.h"

namespace hearth::daemon {
namespace {

struct ttft_summary {
    double median = 0, p90 = 0;
};

ttft_summary summarize(const replay_result & r) {
    std::vector<double> t;
    for (const auto & c : r.completions) t.push_back(c.ttft_ms);
    return {percentile(t, 0.5), percentile(t, 0.9)};
}

// Completions with the same text as cold, over those asked on the same document and cursor
// (after an accept the documents of two replays may differ: each accepts its own suggestion).
std::pair<int, int> same_text(const replay_result & a, const replay_result & cold) {
    int same = 0, comparable = 0;
    for (size_t i = 0; i < a.completions.size() && i < cold.completions.size(); ++i) {
        if (a.completions[i].doc_hash != cold.completions[i].doc_hash) continue;
        ++comparable;
        same += a.completions[i].text == cold.completions[i].text;
    }
    return {same, comparable};
}

}  // namespace

void add_bench_trace_command(CLI::App & bench, cli_state & state) {
    auto * cmd = bench.add_subcommand("trace", "Replay editing traces: time to first token with the KV cache reused vs cold");
    struct flags {
        std::vector<std::string> files;
        std::string model, cache_type = inference::k_default_cache_type;
        int32_t threads = 0, n_predict = 16, ctx = 4096, chunk_min = completion_settings{}.chunk_reuse_min,
                slots = completion_settings{}.slots_per_document;
        uint32_t prompt_budget_ms = completion_settings{}.prompt_budget_ms;
        bool no_typed_ahead = false, no_prefetch = false, window_grid = completion_settings{}.window_grid, verbose = false, json = false;
    };
    auto * f = new flags;
    cmd->add_option("files", f->files, "trace files (JSON lines)")->required();
    cmd->add_option("-m,--model", f->model, "GGUF model file (default: the downloaded default model)");
    cmd->add_option("-t,--threads", f->threads, "compute threads (default: physical cores)");
    cmd->add_option("--cache-type", f->cache_type, "KV cache type (a pair as K/V: f16/q8_0)")->capture_default_str();
    cmd->add_option("-n,--n-predict", f->n_predict, "tokens generated per completion")->capture_default_str();
    cmd->add_option("-c,--ctx", f->ctx, "context size")->capture_default_str();
    cmd->add_option("--chunk-min", f->chunk_min, "reuse moved chunks of at least this many tokens after the common prefix (0: off)")
        ->capture_default_str();
    cmd->add_option("--slots-per-document", f->slots, "KV slots a document may hold (as the daemon's setting)")
        ->capture_default_str()->check(CLI::Range(1, 16));
    cmd->add_option("--prompt-budget-ms", f->prompt_budget_ms,
                    "the daemon's prompt budget: a window that would take longer is shortened (0: never; the replays then "
                    "compare the same windows)")->capture_default_str();
    cmd->add_option("--window-grid", f->window_grid,
                    "window edges on a line grid (true) or exactly prefix-lines / suffix-lines around the cursor (false), "
                    "as the daemon's completion.window-grid")->capture_default_str();
    cmd->add_flag("--no-typed-ahead", f->no_typed_ahead, "do not answer from the suggestion memory");
    cmd->add_flag("--no-prefetch", f->no_prefetch, "do not compute the completion after an accept in advance");
    cmd->add_flag("-v,--verbose", f->verbose, "print every completion");
    cmd->add_flag("--json", f->json, "print the summary as JSON");
    cmd->callback([&state, f] {
        auto path = resolve_model_path(f->model);
        if (!path) { std::fprintf(stderr, "hearth bench trace: %s\n", path.message().c_str()); state.exit_code = 2; return; }
        // The daemon's own engine and completion settings (its defaults, with the flags' changes).
        engine_options eo;
        eo.model_path = *path;
        eo.n_threads = f->threads;
        eo.cache_type = f->cache_type;
        eo.n_ctx = f->ctx;
        auto engine = make_engine_model_service(eo);
        if (!engine) { std::fprintf(stderr, "hearth bench trace: %s\n", engine.message().c_str()); state.exit_code = 1; return; }
        model_service & model = **engine;
        // Three replays of each trace: everything the daemon does (chunk reuse, typed ahead,
        // prefetch, as switched), exact prefix reuse only, and cold.
        replay_options full;
        full.settings.max_tokens = f->n_predict;
        full.settings.chunk_reuse_min = f->chunk_min;
        full.settings.slots_per_document = f->slots;
        full.settings.typed_ahead = !f->no_typed_ahead;
        full.settings.prefetch = !f->no_prefetch;
        full.settings.prompt_budget_ms = f->prompt_budget_ms;
        full.settings.window_grid = f->window_grid;
        replay_options prefix_only = full;
        prefix_only.settings.chunk_reuse_min = 0;
        prefix_only.settings.typed_ahead = prefix_only.settings.prefetch = false;
        replay_options cold = prefix_only;
        cold.cold = true;
        boost::json::array summary;
        if (!f->json)
            std::printf("%-20s %3s | %-20s | %6s | %-20s | %-20s | %7s | %-13s | %s\n", "trace", "n", "TTFT reuse med/p90 ms",
                        "memory", "prefix-only med/p90", "cold med/p90 ms", "ratio", "prefetch med", "same text as cold: reuse, prefix-only");
        for (const auto & file : f->files) {
            std::ifstream in(file);
            if (!in) { std::fprintf(stderr, "hearth bench trace: cannot read '%s'\n", file.c_str()); state.exit_code = 1; return; }
            std::stringstream ss;
            ss << in.rdbuf();
            auto events = parse_trace(ss.str());
            if (!events) { std::fprintf(stderr, "hearth bench trace: %s: %s\n", file.c_str(), events.message().c_str()); state.exit_code = 1; return; }
            auto a = replay_trace(model, *events, full);
            auto b = a ? replay_trace(model, *events, prefix_only) : a;
            auto c = b ? replay_trace(model, *events, cold) : b;
            if (!c) {
                std::fprintf(stderr, "hearth bench trace: %s: %s\n", file.c_str(), c.message().c_str());
                state.exit_code = 1;
                return;
            }
            if (f->verbose)
                for (size_t i = 0; i < a->completions.size(); ++i) {
                    const auto & x = a->completions[i];
                    const auto & p = i < b->completions.size() ? b->completions[i] : replay_record{};
                    const auto & y = i < c->completions.size() ? c->completions[i] : replay_record{};
                    std::printf("  #%zu prompt %d: reuse %s%d reused (%d shifted) / %d evaluated, TTFT %.1f ms, total %.1f ms | "
                                "prefix-only %d evaluated, TTFT %.1f ms | cold TTFT %.1f ms, total %.1f ms%s\n",
                                i, x.n_prompt, x.from_memory ? "FROM MEMORY, " : "", x.n_reused, x.n_shifted, x.n_evaluated,
                                x.ttft_ms, x.total_ms, p.n_evaluated, p.ttft_ms, y.ttft_ms, y.total_ms,
                                x.doc_hash != y.doc_hash ? "  (other document)" : x.text == y.text ? "" : "  (text differs)");
                }
            const auto sa = summarize(*a), sb = summarize(*b), sc = summarize(*c);
            const auto same_a = same_text(*a, *c), same_b = same_text(*b, *c);
            int from_memory = 0;
            for (const auto & x : a->completions) from_memory += x.from_memory;
            const double prefetch_med = percentile(a->prefetch_ms, 0.5);
            // Answers from memory take microseconds: a ratio over them says "at least 1000x".
            const double ratio = sa.median > 0 ? std::min(1000.0, sc.median / sa.median) : 1000.0;
            const std::string name = file.substr(file.find_last_of('/') == std::string::npos ? 0 : file.find_last_of('/') + 1);
            if (f->json) {
                summary.push_back(boost::json::object{
                    {"trace", name}, {"completions", a->completions.size()}, {"ttft_reuse_median_ms", sa.median},
                    {"ttft_reuse_p90_ms", sa.p90}, {"from_memory", from_memory}, {"ttft_prefix_only_median_ms", sb.median},
                    {"ttft_prefix_only_p90_ms", sb.p90}, {"ttft_cold_median_ms", sc.median}, {"ttft_cold_p90_ms", sc.p90},
                    {"ratio_median", ratio}, {"prefetches", a->prefetch_ms.size()}, {"prefetch_median_ms", prefetch_med},
                    {"same_text", same_a.first}, {"same_text_prefix_only", same_b.first}, {"comparable", same_a.second},
                    {"chunk_min", f->chunk_min}, {"window_grid", full.settings.window_grid},
                    {"typed_ahead", full.settings.typed_ahead}, {"prefetch", full.settings.prefetch}});
            } else {
                char ratio_text[16];
                if (ratio >= 1000.0) std::snprintf(ratio_text, sizeof ratio_text, ">=1000x");
                else std::snprintf(ratio_text, sizeof ratio_text, "%.1fx", ratio);
                std::printf("%-20s %3zu | %8.1f / %-9.1f | %6d | %8.1f / %-9.1f | %8.1f / %-9.1f | %7s | %6.1f (%3zu) | %d/%d, %d/%d\n",
                            name.c_str(), a->completions.size(), sa.median, sa.p90, from_memory, sb.median, sb.p90, sc.median,
                            sc.p90, ratio_text, prefetch_med, a->prefetch_ms.size(), same_a.first, same_a.second, same_b.first,
                            same_b.second);
            }
            std::fflush(stdout);
        }
        if (f->json) std::printf("%s\n", boost::json::serialize(summary).c_str());
        state.exit_code = 0;
    });
}

}  // namespace hearth::daemon
