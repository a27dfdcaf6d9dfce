#include "daemon/pipeline/completion_pipeline.h"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

namespace hearth::daemon {
namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

}  // namespace

completion_pipeline::completion_pipeline(model_service * model, completion_settings settings)
    : model_(model), settings_(settings) {}

completion_pipeline::owner_context & completion_pipeline::context_of(uint64_t owner) {
    auto it = contexts_.find(owner);
    if (it == contexts_.end())
        it = contexts_.emplace(owner, owner_context{context_ring(static_cast<size_t>(settings_.extra_context_chunks),
                                                                 settings_.extra_context_lines), "", 0}).first;
    return it->second;
}

void completion_pipeline::document_opened(uint64_t owner, const std::string & uri, std::string_view text) {
    if (settings_.extra_context_chunks <= 0) return;
    std::lock_guard lock(context_mu_);
    context_of(owner).ring.add(uri, text, 0);
}

void completion_pipeline::forget_owner(uint64_t owner) {
    std::lock_guard lock(context_mu_);
    contexts_.erase(owner);
}

std::vector<context_chunk> completion_pipeline::extra_context(uint64_t owner, const std::string & uri, int64_t line,
                                                              const text_lookup & text_of) {
    if (settings_.extra_context_chunks <= 0) return {};
    std::lock_guard lock(context_mu_);
    owner_context & oc = context_of(owner);
    if (!oc.last_uri.empty() && oc.last_uri != uri && text_of)
        if (auto prev = text_of(oc.last_uri)) oc.ring.add(oc.last_uri, *prev, oc.last_line);
    oc.last_uri = uri;
    oc.last_line = line;
    return oc.ring.chunks_except(uri);
}

std::optional<completion_answer> completion_pipeline::recall(const completion_ask & a) {
    if (!settings_.typed_ahead || a.invoked) return std::nullopt;
    const auto t0 = clock_type::now();
    auto hit = memory_.lookup(a.key, a.before(), a.after());
    if (!hit) return std::nullopt;
    completion_answer out;
    out.items = std::move(*hit);
    out.from_memory = true;
    out.ms = out.ttft_ms = ms_since(t0);
    return out;
}

fim_request completion_pipeline::request_for(const completion_ask & a) const {
    fim_request req;
    req.uri = a.uri;
    req.language_id = a.language_id;
    req.n_predict = settings_.max_tokens;
    req.prompt_budget = std::chrono::milliseconds(settings_.prompt_budget_ms);
    req.time_cap = std::chrono::milliseconds(settings_.time_cap_ms);
    req.chunk_reuse_min = settings_.chunk_reuse_min;
    req.slots_per_document = settings_.slots_per_document;
    req.retry_repeated_line = settings_.retry_repeated_line;
    req.extra_context = a.extra;
    const fim_window w = cut_fim_window(a.text, a.cursor, settings_.prefix_lines, settings_.suffix_lines,
                                        settings_.window_grid ? window_edges::grid : window_edges::exact);
    req.prefix = w.prefix;
    req.suffix = w.suffix;
    req.mode = detect_mode(a.text, a.cursor);
    req.time_budget = std::chrono::milliseconds(req.mode == completion_mode::multi_line ? settings_.multi_line_time_budget_ms
                                                                                       : settings_.time_budget_ms);
    req.n_candidates = a.invoked ? settings_.invoked_candidates : 1;
    return req;
}

result<completion_answer> completion_pipeline::run(const completion_ask & a, const fim_request & req, std::stop_token stop,
                                                   bool remember) {
    const auto t0 = clock_type::now();
    std::optional<double> first_piece_ms;
    auto r = model_->complete(req, stop, [&](std::string_view) {
        if (!first_piece_ms) first_piece_ms = ms_since(t0);
    });
    if (!r) return r.error();
    completion_answer out;
    out.ms = ms_since(t0);
    out.ttft_ms = first_piece_ms.value_or(out.ms);
    out.timings = r->timings;
    if (stop.stop_requested()) return out;   // stale: neither counted nor remembered
    out.items = clean_and_record(req, *r, out.ms);
    if (remember && settings_.typed_ahead && !out.items.empty())
        memory_.remember(a.key, a.before(), a.after(), out.items);
    return out;
}

std::vector<std::string> completion_pipeline::clean_and_record(const fim_request & req, const completion & r, double ms) {
    std::vector<std::string> inserts;
    cleaned_completion first;
    for (size_t k = 0; k < r.candidates.size(); ++k) {
        cleaned_completion cleaned = clean_completion(r.candidates[k].text, req.prefix, req.suffix, req.mode);
        if (k == 0) first = cleaned;
        if (!cleaned.text.empty() && std::find(inserts.begin(), inserts.end(), cleaned.text) == inserts.end())
            inserts.push_back(std::move(cleaned.text));
    }
    std::string why;
    if (!r.candidates.empty()) {
        const auto & c0 = r.candidates.front();
        ++outcomes_.ends[static_cast<size_t>(c0.stop)];
        why = fmt::format("first candidate {} bytes, ended by {}", c0.text.size(), stop_reason_name(c0.stop));
        if (first.cut != cleanup_filter::none) {
            ++outcomes_.trimmed[static_cast<size_t>(first.cut)];
            why += fmt::format(", cut by the cleanup's {} filter", cleanup_filter_name(first.cut));
        }
    }
    if (inserts.empty()) {
        ++outcomes_.empty;
        ++outcomes_.emptied[static_cast<size_t>(r.candidates.empty() ? cleanup_filter::none : first.cut)];
        if (r.candidates.empty()) why = "the model gave nothing";
    }
    spdlog::debug("inline completion {}: {} item(s){} in {:.1f} ms ({} prompt tokens, {} cached, {} evaluated since the "
                  "last answer, {} generated{}); {}", req.uri,
                  inserts.size(), inserts.empty() ? " (empty)" : "", ms, r.timings.n_prompt_tokens, r.timings.n_cached_tokens,
                  r.timings.n_burst_evaluated, r.timings.n_generated,
                  r.timings.n_window_shortened > 0 ? ", window shortened for the prompt budget" : "", why);
    return inserts;
}

std::optional<completion_ask> completion_pipeline::after_accept(const completion_ask & a, const std::string & accepted) const {
    if (!settings_.prefetch || accepted.empty()) return std::nullopt;
    completion_ask next = a;
    next.invoked = false;
    next.text = a.text.substr(0, a.cursor) + accepted + a.text.substr(a.cursor);
    next.cursor = a.cursor + accepted.size();
    if (memory_.has(next.key, next.before(), next.after()))
        return std::nullopt;   // already computed
    return next;
}

result<generation_timings> completion_pipeline::warm_up(const fim_request & req, std::stop_token stop) {
    fim_request w = req;
    w.prefill_only = true;
    auto r = model_->complete(w, stop, {});
    if (!r) return r.error();
    return r->timings;
}

std::optional<double> completion_pipeline::prefetch(const completion_ask & next, std::stop_token stop) {
    const auto t0 = clock_type::now();
    const fim_request req = request_for(next);
    auto r = model_->complete(req, stop, {});
    if (!r || stop.stop_requested() || r->candidates.empty()) return std::nullopt;
    std::string insert = trim_completion(r->candidates.front().text, req.prefix, req.suffix, req.mode);
    if (insert.empty()) return std::nullopt;
    memory_.remember(next.key, next.before(), next.after(), {insert});
    ++prefetched_;
    return ms_since(t0);
}

}  // namespace hearth::daemon
