#include "daemon/bench/trace_replay.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>

#include <xxhash.h>

#include "daemon/pipeline/fim_window.h"
#include "daemon/pipeline/suggestion_memory.h"
#include "inference/completion_rules.h"
#include "inference/fim.h"
#include "inference/generate.h"
#include "inference/sequence.h"
#include "inference/session_cache.h"

namespace hearth::daemon {
namespace {

using clock_type = std::chrono::steady_clock;

double ms_between(clock_type::time_point a, clock_type::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

struct document {
    std::string text;
    size_t cursor = 0;
    std::string shown;          // the suggestion on screen at the cursor ("" when none)
};

class replayer {
public:
    replayer(inference::loaded_model & lm, const replay_options & ro)
        : lm_(lm), ro_(ro), sessions_(lm.eng(), lm.cache_type(), lm.n_ctx(), k_budget) {}

    result<replay_result> run(const std::vector<trace_event> & events) {
        for (size_t i = 0; i < events.size(); ++i)
            if (auto s = step(events[i]); !s) return fail("trace event ", i + 1, ": ", s.message());
        return std::move(out_);
    }

private:
    status step(const trace_event & e) {
        if (e.op == trace_event::kind::open) {
            docs_[e.uri] = document{e.text, 0, ""};
            return {};
        }
        auto it = docs_.find(e.uri);
        if (it == docs_.end()) return fail("document ", e.uri, " is not open");
        document & d = it->second;
        switch (e.op) {
        case trace_event::kind::edit: {
            auto end = apply_trace_edit(d.text, e);
            if (!end) return end.error();
            d.cursor = *end;
            d.shown.clear();
            return {};
        }
        case trace_event::kind::type:
            d.text.insert(d.cursor, e.text);
            d.cursor += e.text.size();
            d.shown.clear();
            return {};
        case trace_event::kind::type_suggestion:
        case trace_event::kind::accept: {
            // Nothing shown (the model had nothing to add): there is nothing to type or accept.
            if (d.shown.empty()) return {};
            // Typing leaves at least one byte of the suggestion; accepting inserts all of it.
            size_t n = d.shown.size();
            if (e.op == trace_event::kind::type_suggestion) n = std::min<size_t>(static_cast<size_t>(e.chars), n - 1);
            d.text.insert(d.cursor, d.shown, 0, n);
            d.cursor += n;
            d.shown.clear();
            return {};
        }
        case trace_event::kind::complete: {
            if (e.line >= 0) {
                auto c = trace_offset(d.text, e.line, e.col);
                if (!c) return c.error();
                d.cursor = *c;
            }
            return complete(e.uri, d);
        }
        case trace_event::kind::open: break;
        }
        return {};
    }

    status complete(const std::string & uri, document & d) {
        const std::string_view before = std::string_view(d.text).substr(0, d.cursor);
        const std::string_view after = std::string_view(d.text).substr(d.cursor);
        replay_record r;
        r.doc_hash = XXH3_64bits(d.text.data(), d.text.size()) ^ (d.cursor * 0x9E3779B97F4A7C15ull);
        if (ro_.typed_ahead) {
            const auto t0 = clock_type::now();
            if (auto hit = memory_.lookup(uri, before, after)) {
                r.ttft_ms = r.total_ms = ms_between(t0, clock_type::now());
                r.from_memory = true;
                r.text = hit->front();
                d.shown = r.text;
                out_.completions.push_back(std::move(r));
                if (ro_.prefetch) return prefetch(uri, d);
                return {};
            }
        }
        auto s = run_model(uri, d.text, d.cursor, r);
        if (!s) return s;
        d.shown = r.text;
        if (ro_.typed_ahead && !r.text.empty()) memory_.remember(uri, before, after, {r.text});
        out_.completions.push_back(std::move(r));
        if (ro_.prefetch && !d.shown.empty()) return prefetch(uri, d);
        return {};
    }

    // The completion after the shown suggestion is accepted, computed as the daemon does while
    // the user reads it; timed apart (it is not on the way to any first token).
    status prefetch(const std::string & uri, const document & d) {
        const std::string text = d.text.substr(0, d.cursor) + d.shown + d.text.substr(d.cursor);
        const size_t cursor = d.cursor + d.shown.size();
        const std::string_view before = std::string_view(text).substr(0, cursor), after = std::string_view(text).substr(cursor);
        if (memory_.has(uri, before, after)) return {};
        replay_record r;
        if (auto s = run_model(uri, text, cursor, r); !s) return s;
        out_.prefetch_ms.push_back(r.total_ms);
        if (!r.text.empty()) memory_.remember(uri, before, after, {r.text});
        return {};
    }

    status run_model(const std::string & uri, const std::string & text, size_t cursor, replay_record & r) {
        const auto window = cut_fim_window(text, cursor, ro_.prefix_lines, ro_.suffix_lines);
        const completion_mode mode = detect_mode(text, cursor);
        inference::fim_input in;
        in.prefix = window.prefix;
        in.suffix = window.suffix;
        in.path = uri;
        auto prompt = inference::build_completion_prompt(lm_.vocab(), in);
        if (!prompt) return prompt.error();
        if (static_cast<int64_t>(prompt->size()) + ro_.n_predict > lm_.n_ctx()) return fail("the prompt does not fit the context");

        // The daemon's slot choice (session_cache::pick_slot); cold: a slot of its own, cleared.
        const std::string key = ro_.reuse ? sessions_.pick_slot(uri, *prompt, ro_.chunk_min, ro_.slots_per_document) : "cold";
        auto acquired = sessions_.acquire(key, static_cast<int32_t>(prompt->size()) + ro_.n_predict);
        if (!acquired) return acquired.error();
        inference::sequence & slot = **acquired;
        const auto t0 = clock_type::now();
        std::vector<float> logits;
        auto pf = inference::prefill(lm_.eng(), slot, *prompt, logits, inference::prefill_options{ro_.reuse, ro_.chunk_min, {}});
        if (!pf) return pf.error();
        inference::generation_params params;
        params.n_predict = ro_.n_predict;
        const auto line_mode = mode == completion_mode::multi_line ? inference::line_mode::multi_line : inference::line_mode::single_line;
        params.rule = inference::make_completion_rule(line_mode, in.prefix, in.suffix);
        std::optional<clock_type::time_point> first;
        auto gen = inference::generate(lm_.eng(), lm_.vocab(), slot, logits, params, {}, [&](std::string_view) {
            if (!first) first = clock_type::now();
        });
        if (!gen) return gen.error();
        const auto t1 = clock_type::now();
        r.n_prompt = pf->n_prompt;
        r.n_reused = pf->n_reused;
        r.n_shifted = pf->n_shifted;
        r.n_evaluated = pf->n_evaluated;
        r.ttft_ms = ms_between(t0, first.value_or(t1));
        r.total_ms = ms_between(t0, t1);
        r.text = trim_completion(gen->text, in.prefix, in.suffix, mode);
        return {};
    }

    inference::loaded_model & lm_;
    replay_options ro_;
    std::map<std::string, document> docs_;
    // Room for every slot of a replay: a trace's documents are few and the contexts short.
    static constexpr uint64_t k_budget = 64ull << 30;
    inference::session_cache sessions_;
    suggestion_memory memory_;
    replay_result out_;
};

}  // namespace

result<replay_result> replay_trace(inference::loaded_model & lm, const std::vector<trace_event> & events,
                                   const replay_options & ro) {
    return replayer(lm, ro).run(events);
}

}  // namespace hearth::daemon
