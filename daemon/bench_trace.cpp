#include "daemon/bench_trace.h"

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "daemon/fim_window.h"
#include "daemon/model_path.h"
#include "inference/completion_rules.h"
#include "inference/fim.h"
#include "inference/generate.h"
#include "inference/loaded_model.h"
#include "inference/sequence.h"

namespace hearth::daemon {

result<size_t> trace_offset(const std::string & text, int64_t line, int64_t col) {
    if (line < 0 || col < 0) return fail("position ", line, ":", col, " is negative");
    size_t off = 0;
    for (int64_t l = 0; l < line; ++l) {
        const auto nl = text.find('\n', off);
        if (nl == std::string::npos) return fail("line ", line, " is past the end of the document");
        off = nl + 1;
    }
    const size_t eol = std::min(text.find('\n', off), text.size());
    if (static_cast<size_t>(col) > eol - off) return fail("column ", col, " is past the end of line ", line);
    return off + static_cast<size_t>(col);
}

status apply_trace_edit(std::string & text, const trace_event & e) {
    auto a = trace_offset(text, e.start_line, e.start_col);
    if (!a) return a.error();
    auto b = trace_offset(text, e.end_line, e.end_col);
    if (!b) return b.error();
    if (*b < *a) return fail("edit range ends before it starts");
    text.replace(*a, *b - *a, e.text);
    return {};
}

result<std::vector<trace_event>> parse_trace(const std::string & jsonl) {
    std::vector<trace_event> out;
    std::istringstream in(jsonl);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        boost::system::error_code ec;
        auto v = boost::json::parse(line, ec);
        if (ec || !v.is_object()) return fail("trace line ", n, ": not a JSON object");
        const auto & o = v.as_object();
        auto str = [&](const char * k) -> result<std::string> {
            const auto * x = o.if_contains(k);
            if (!x || !x->is_string()) return fail("trace line ", n, ": '", k, "' must be a string");
            return std::string(x->as_string());
        };
        auto num = [&](const boost::json::value * x, const char * k) -> result<int64_t> {
            if (!x || !x->is_int64()) return fail("trace line ", n, ": '", k, "' must be an integer");
            return x->as_int64();
        };
        auto pos = [&](const char * k, int64_t & l, int64_t & c) -> status {
            const auto * x = o.if_contains(k);
            if (!x || !x->is_array() || x->as_array().size() != 2) return fail("trace line ", n, ": '", k, "' must be [line, col]");
            auto a = num(&x->as_array()[0], k);
            if (!a) return a.error();
            auto b = num(&x->as_array()[1], k);
            if (!b) return b.error();
            l = *a;
            c = *b;
            return {};
        };
        trace_event e;
        auto op = str("op");
        if (!op) return op.error();
        auto uri = str("uri");
        if (!uri) return uri.error();
        e.uri = *uri;
        if (*op == "open") {
            e.op = trace_event::kind::open;
            auto t = str("text");
            if (!t) return t.error();
            e.text = *t;
        } else if (*op == "edit") {
            e.op = trace_event::kind::edit;
            auto t = str("text");
            if (!t) return t.error();
            e.text = *t;
            if (auto s = pos("start", e.start_line, e.start_col); !s) return s.error();
            if (auto s = pos("end", e.end_line, e.end_col); !s) return s.error();
        } else if (*op == "complete") {
            e.op = trace_event::kind::complete;
            auto l = num(o.if_contains("line"), "line");
            if (!l) return l.error();
            auto c = num(o.if_contains("col"), "col");
            if (!c) return c.error();
            e.line = *l;
            e.col = *c;
        } else {
            return fail("trace line ", n, ": op '", *op, "' is not open, edit or complete");
        }
        out.push_back(std::move(e));
    }
    return out;
}

namespace {

struct record {
    int32_t n_prompt = 0, n_reused = 0, n_shifted = 0, n_evaluated = 0;
    double ttft_ms = 0, total_ms = 0;
    std::string text;
};

struct replay_options {
    bool reuse = true;
    int32_t n_predict = 16;
    int32_t chunk_min = 0;   // > 0: chunk reuse after the common prefix (inference::prefill_options)
    int32_t prefix_lines = 64;
    int32_t suffix_lines = 16;
};

result<std::vector<record>> replay(inference::loaded_model & lm, const std::vector<trace_event> & events, const replay_options & ro) {
    using clock = std::chrono::steady_clock;
    std::map<std::string, std::string> docs;
    std::map<std::string, std::unique_ptr<inference::sequence>> slots;
    std::vector<record> out;
    for (size_t i = 0; i < events.size(); ++i) {
        const auto & e = events[i];
        if (e.op == trace_event::kind::open) {
            docs[e.uri] = e.text;
            continue;
        }
        auto it = docs.find(e.uri);
        if (it == docs.end()) return fail("trace event ", i + 1, ": document ", e.uri, " is not open");
        if (e.op == trace_event::kind::edit) {
            if (auto s = apply_trace_edit(it->second, e); !s) return fail("trace event ", i + 1, ": ", s.message());
            continue;
        }
        auto cursor = trace_offset(it->second, e.line, e.col);
        if (!cursor) return fail("trace event ", i + 1, ": ", cursor.message());
        const auto window = cut_fim_window(it->second, *cursor, ro.prefix_lines, ro.suffix_lines);
        const auto mode = detect_mode(it->second, *cursor) == completion_mode::multi_line ? inference::line_mode::multi_line
                                                                                           : inference::line_mode::single_line;
        inference::fim_input in;
        in.prefix = window.prefix;
        in.suffix = window.suffix;
        in.path = e.uri;
        auto prompt = inference::build_completion_prompt(lm.vocab(), in);
        if (!prompt) return prompt.error();
        if (static_cast<int64_t>(prompt->size()) + ro.n_predict > lm.n_ctx()) return fail("trace event ", i + 1, ": the prompt does not fit the context");

        auto & slot = slots[e.uri];
        if (!slot || !ro.reuse) slot = std::make_unique<inference::sequence>(lm.eng().make_cache(lm.cache_type(), lm.n_ctx()));
        const auto t0 = clock::now();
        std::vector<float> logits;
        auto pf = inference::prefill(lm.eng(), *slot, *prompt, logits, inference::prefill_options{ro.reuse, ro.chunk_min});
        if (!pf) return pf.error();
        inference::generation_params params;
        params.n_predict = ro.n_predict;
        params.rule = inference::make_completion_rule(mode, in.prefix, in.suffix);
        std::optional<clock::time_point> first;
        auto gen = inference::generate(lm.eng(), lm.vocab(), *slot, logits, params, {}, [&](std::string_view) {
            if (!first) first = clock::now();
        });
        if (!gen) return gen.error();
        const auto t1 = clock::now();
        record r;
        r.n_prompt = pf->n_prompt;
        r.n_reused = pf->n_reused;
        r.n_shifted = pf->n_shifted;
        r.n_evaluated = pf->n_evaluated;
        r.ttft_ms = std::chrono::duration<double, std::milli>(first.value_or(t1) - t0).count();
        r.total_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        r.text = gen->text;
        out.push_back(std::move(r));
    }
    return out;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const double idx = p * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<size_t>(idx);
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (idx - static_cast<double>(lo));
}

}  // namespace

void add_bench_trace_command(CLI::App & bench, cli_state & state) {
    auto * cmd = bench.add_subcommand("trace", "Replay editing traces: time to first token with the KV cache reused vs cold");
    struct flags {
        std::vector<std::string> files;
        std::string model, cache_type = "q8_0";
        int32_t threads = 0, n_predict = 16, ctx = 4096, chunk_min = inference::k_default_chunk_min;
        bool verbose = false, json = false;
    };
    auto * f = new flags;
    cmd->add_option("files", f->files, "trace files (JSON lines)")->required();
    cmd->add_option("-m,--model", f->model, "GGUF model file (default: the downloaded default model)");
    cmd->add_option("-t,--threads", f->threads, "compute threads (default: physical cores)");
    cmd->add_option("--cache-type", f->cache_type, "KV cache type")->capture_default_str();
    cmd->add_option("-n,--n-predict", f->n_predict, "tokens generated per completion")->capture_default_str();
    cmd->add_option("-c,--ctx", f->ctx, "context size")->capture_default_str();
    cmd->add_option("--chunk-min", f->chunk_min, "reuse moved chunks of at least this many tokens after the common prefix (0: off)")
        ->capture_default_str();
    cmd->add_flag("-v,--verbose", f->verbose, "print every completion");
    cmd->add_flag("--json", f->json, "print the summary as JSON");
    cmd->callback([&state, f] {
        auto path = resolve_model_path(f->model);
        if (!path) { std::fprintf(stderr, "hearth bench trace: %s\n", path.message().c_str()); state.exit_code = 2; return; }
        inference::load_options lo;
        lo.model_path = *path;
        lo.n_threads = f->threads;
        lo.cache_type = f->cache_type;
        lo.n_ctx = f->ctx;
        auto lm = inference::loaded_model::load(lo);
        if (!lm) { std::fprintf(stderr, "hearth bench trace: %s\n", lm.message().c_str()); state.exit_code = 1; return; }
        boost::json::array summary;
        // With chunk reuse on, a prefix-only replay runs too, so one run shows both against cold.
        const bool compare = f->chunk_min > 0;
        if (!f->json) {
            std::printf("%-20s %3s | %-24s | %s%-24s | %6s | %s\n", "trace", "n", "TTFT reuse median/p90 ms",
                        compare ? "TTFT prefix-only med/p90 | " : "", "TTFT cold median/p90 ms", "ratio",
                        compare ? "same text as cold: reuse, prefix-only" : "same text as cold");
        }
        for (const auto & file : f->files) {
            std::ifstream in(file);
            if (!in) { std::fprintf(stderr, "hearth bench trace: cannot read '%s'\n", file.c_str()); state.exit_code = 1; return; }
            std::stringstream ss;
            ss << in.rdbuf();
            auto events = parse_trace(ss.str());
            if (!events) { std::fprintf(stderr, "hearth bench trace: %s: %s\n", file.c_str(), events.message().c_str()); state.exit_code = 1; return; }
            replay_options on{true, f->n_predict, f->chunk_min}, prefix_only{true, f->n_predict, 0}, off{false, f->n_predict, 0};
            auto warm = replay(**lm, *events, on);
            auto plain = compare ? replay(**lm, *events, prefix_only) : warm;
            auto cold = replay(**lm, *events, off);
            for (const auto * r : {&warm, &plain, &cold}) {
                if (!*r) {
                    std::fprintf(stderr, "hearth bench trace: %s: %s\n", file.c_str(), r->message().c_str());
                    state.exit_code = 1;
                    return;
                }
            }
            std::vector<double> t_on, t_plain, t_off;
            int same = 0, same_plain = 0;
            for (size_t i = 0; i < warm->size(); ++i) {
                const auto & a = (*warm)[i];
                const auto & p = (*plain)[i];
                const auto & b = (*cold)[i];
                t_on.push_back(a.ttft_ms);
                t_plain.push_back(p.ttft_ms);
                t_off.push_back(b.ttft_ms);
                same += a.text == b.text;
                same_plain += p.text == b.text;
                if (f->verbose)
                    std::printf("  #%zu prompt %d: reuse %d reused (%d shifted) / %d evaluated, TTFT %.1f ms, total %.1f ms | "
                                "prefix-only %d evaluated, TTFT %.1f ms | cold TTFT %.1f ms, total %.1f ms%s\n",
                                i, a.n_prompt, a.n_reused, a.n_shifted, a.n_evaluated, a.ttft_ms, a.total_ms, p.n_evaluated,
                                p.ttft_ms, b.ttft_ms, b.total_ms, a.text == b.text ? "" : "  (text differs)");
            }
            const double m_on = percentile(t_on, 0.5), p_on = percentile(t_on, 0.9);
            const double m_plain = percentile(t_plain, 0.5), p_plain = percentile(t_plain, 0.9);
            const double m_off = percentile(t_off, 0.5), p_off = percentile(t_off, 0.9);
            const std::string name = file.substr(file.find_last_of('/') == std::string::npos ? 0 : file.find_last_of('/') + 1);
            if (f->json) {
                boost::json::object o{{"trace", name}, {"completions", warm->size()}, {"ttft_reuse_median_ms", m_on},
                                      {"ttft_reuse_p90_ms", p_on}, {"ttft_cold_median_ms", m_off}, {"ttft_cold_p90_ms", p_off},
                                      {"ratio_median", m_on > 0 ? m_off / m_on : 0}, {"same_text", same}, {"chunk_min", f->chunk_min}};
                if (compare) {
                    o["ttft_prefix_only_median_ms"] = m_plain;
                    o["ttft_prefix_only_p90_ms"] = p_plain;
                    o["same_text_prefix_only"] = same_plain;
                }
                summary.push_back(std::move(o));
            } else {
                char mid[64] = "";
                if (compare) std::snprintf(mid, sizeof mid, "%10.1f / %-11.1f | ", m_plain, p_plain);
                char sm[64];
                if (compare) std::snprintf(sm, sizeof sm, "%d/%zu, %d/%zu", same, warm->size(), same_plain, warm->size());
                else std::snprintf(sm, sizeof sm, "%d/%zu", same, warm->size());
                std::printf("%-20s %3zu | %10.1f / %-11.1f | %s%10.1f / %-11.1f | %5.1fx | %s\n", name.c_str(), warm->size(), m_on,
                            p_on, mid, m_off, p_off, m_on > 0 ? m_off / m_on : 0, sm);
            }
            std::fflush(stdout);
        }
        if (f->json) std::printf("%s\n", boost::json::serialize(summary).c_str());
        state.exit_code = 0;
    });
}

}  // namespace hearth::daemon
