#include "daemon/services/completion_service.h"

#include <algorithm>
#include <chrono>

#include <boost/json/object.hpp>
#include <spdlog/spdlog.h>

#include "daemon/services/request_job.h"

namespace hearth::daemon {

std::string completion_key(uint64_t owner, std::string_view uri) { return std::to_string(owner) + "\n" + std::string(uri); }

namespace {
// The scheduler key of a document's prefetch: separate from its requests', so an edit (an
// accept is one) does not cancel it; a request that needs the model does.
std::string prefetch_key(const std::string & key) { return "prefetch\n" + key; }
}  // namespace

completion_service::completion_service(std::shared_ptr<scheduler> sched, model_service * model, completion_settings settings)
    : sched_(std::move(sched)), model_(model), settings_(settings) {}

void completion_service::document_changed(uint64_t owner, std::string_view uri) { sched_->cancel_key(completion_key(owner, uri)); }

void completion_service::handle(uint64_t owner, const lsp::inline_completion_params & p, const lsp::request_context & ctx,
                                lsp::typed_responder<lsp::inline_completion_list> out) {
    using lsp::errc;
    if (!model_) {
        out.fail(errc::request_failed, std::string(k_no_model_message));
        return;
    }
    const lsp::document * doc = ctx.documents ? ctx.documents->find(p.textDocument.uri) : nullptr;
    if (!doc) {
        out.fail(errc::invalid_params, "textDocument/inlineCompletion: document '" + p.textDocument.uri + "' is not open");
        return;
    }
    // The model continues the text as the editor shows it: with a suggestion selected in the
    // completion widget, as if that suggestion were already inserted (the spec requires our
    // items to extend it and to replace the same range).
    // The range answered is the one the text is computed for: a position past a line's or the
    // document's end is clamped, one inside a surrogate pair moves to the pair's start.
    const std::string & text = doc->text();
    std::string selected;
    size_t begin = doc->offset_of(p.position), end = begin;
    if (const auto & sel = p.context.selectedCompletionInfo) {
        selected = sel->text;
        begin = doc->offset_of(sel->range.start);
        end = std::max(begin, doc->offset_of(sel->range.end));
    }
    const lsp::range replace{doc->position_of(begin), doc->position_of(end)};
    std::string shown = text.substr(0, begin) + selected + text.substr(end);
    const size_t cursor = begin + selected.size();

    const bool invoked = p.context.triggerKind == lsp::inline_completion_trigger_kind::invoked;
    const std::string key = completion_key(owner, doc->uri());
    auto extra = extra_context_for(owner, *doc, p.position.line, ctx.documents);
    // Typed ahead (or accepted, then prefetched): answered from memory, no model run. Not for
    // Invoked requests (they ask for fresh candidates) nor over a selected popup item.
    const bool use_memory = settings_.typed_ahead && !invoked && selected.empty() && !p.context.selectedCompletionInfo;
    const std::string_view before = std::string_view(shown).substr(0, cursor), after = std::string_view(shown).substr(cursor);
    if (use_memory) {
        if (auto hit = memory_.lookup(key, before, after)) {
            sched_->cancel_key(key);   // an older request for this document is stale now
            const uint64_t first = next_item_id_.fetch_add(hit->size());
            ++served_;
            out.reply(make_list(doc->uri(), *hit, selected, replace, first));
            if (settings_.prefetch)
                submit_prefetch(owner, base_request(*doc, std::move(extra)), std::string(before), std::string(after),
                                hit->front());
            return;
        }
    }
    // The model is needed now: a prefetch still running for this document yields to it.
    sched_->cancel_key(prefetch_key(key));

    fim_request req = base_request(*doc, std::move(extra));
    const fim_window w = cut_fim_window(shown, cursor, settings_.prefix_lines, settings_.suffix_lines);
    req.prefix = w.prefix;
    req.suffix = w.suffix;
    req.mode = detect_mode(shown, cursor);
    req.n_candidates = invoked ? settings_.invoked_candidates : 1;
    // What the memory needs after the answer (copies: the document may change meanwhile).
    std::string before_copy = use_memory || settings_.prefetch ? std::string(before) : std::string();
    std::string after_copy = use_memory || settings_.prefetch ? std::string(after) : std::string();

    const uint64_t first_item_id = next_item_id_.fetch_add(static_cast<uint64_t>(req.n_candidates));
    job j;
    j.priority = job_priority::completion;
    j.owner = owner;
    j.supersede_key = key;
    j.debounce = invoked ? std::chrono::milliseconds(0) : std::chrono::milliseconds(settings_.debounce_ms);
    j.dropped = [out](drop_reason r) {
        if (r == drop_reason::shutdown) out.fail(lsp::errc::request_cancelled, "the daemon is shutting down");
        else out.cancelled();
    };
    j.run = [this, out, owner, key, req = std::move(req), cancel = ctx.cancel, replace, selected, first_item_id,
             before = std::move(before_copy), after = std::move(after_copy)](std::stop_token stop) {
        if (cancel.requested() || stop.stop_requested()) {
            out.cancelled();
            return;
        }
        const auto t0 = std::chrono::steady_clock::now();
        auto r = model_->complete(req, stop, {});
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (cancel.requested() || stop.stop_requested()) {
            out.cancelled();
            return;
        }
        if (!r) {
            spdlog::warn("inline completion for {} failed: {}", req.uri, r.message());
            out.fail(lsp::errc::request_failed, "inline completion failed: " + r.message());
            return;
        }
        last_ms_.store(ms);
        ++served_;
        const std::vector<std::string> inserts = clean_and_record(req, *r, ms);
        auto list = make_list(req.uri, inserts, selected, replace, first_item_id);
        // Remembered before the reply goes out: the client's next keystroke may arrive at once.
        const bool keep = selected.empty() && !inserts.empty();
        if (keep && settings_.typed_ahead) memory_.remember(key, before, after, inserts);
        out.reply(list);
        if (keep && settings_.prefetch) submit_prefetch(owner, req, before, after, inserts.front());
    };
    submit_request_job(sched_, std::move(j), ctx, out);
}

std::vector<std::string> completion_service::clean_and_record(const fim_request & req, const completion & r, double ms) {
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
        ++ends_[static_cast<size_t>(c0.stop)];
        why = fmt::format("first candidate {} bytes, ended by {}", c0.text.size(), stop_reason_name(c0.stop));
        if (first.cut != cleanup_filter::none) {
            ++trimmed_[static_cast<size_t>(first.cut)];
            why += fmt::format(", cut by the cleanup's {} filter", cleanup_filter_name(first.cut));
        }
    }
    if (inserts.empty()) {
        ++empty_;
        ++emptied_[static_cast<size_t>(r.candidates.empty() ? cleanup_filter::none : first.cut)];
        if (r.candidates.empty()) why = "the model gave nothing";
    }
    spdlog::debug("inline completion {}: {} item(s){} in {:.1f} ms ({} prompt tokens, {} cached, {} generated{}); {}", req.uri,
                  inserts.size(), inserts.empty() ? " (empty)" : "", ms, r.timings.n_prompt_tokens, r.timings.n_cached_tokens,
                  r.timings.n_generated,
                  r.timings.n_window_shortened > 0 ? ", window shortened for the prompt budget" : "", why);
    return inserts;
}

boost::json::object completion_service::outcomes_json() const {
    boost::json::object ends, trimmed, emptied;
    for (size_t i = 0; i < k_n_stop_reasons; ++i) ends[stop_reason_name(static_cast<stop_reason>(i))] = ends_[i].load();
    for (size_t i = 0; i < k_n_cleanup_filters; ++i) {
        const auto f = static_cast<cleanup_filter>(i);
        if (f != cleanup_filter::none) trimmed[cleanup_filter_name(f)] = trimmed_[i].load();
        emptied[f == cleanup_filter::none ? std::string_view("model") : cleanup_filter_name(f)] = emptied_[i].load();
    }
    return {{"empty", empty_.load()}, {"emptyBecause", std::move(emptied)}, {"ends", std::move(ends)}, {"trimmed", std::move(trimmed)}};
}

fim_request completion_service::base_request(const lsp::document & doc, std::vector<context_chunk> extra) const {
    fim_request req;
    req.uri = doc.uri();
    req.language_id = doc.language_id();
    req.n_predict = settings_.max_tokens;
    req.prompt_budget = std::chrono::milliseconds(settings_.prompt_budget_ms);
    req.time_budget = std::chrono::milliseconds(settings_.time_budget_ms);
    req.time_cap = std::chrono::milliseconds(settings_.time_cap_ms);
    req.chunk_reuse_min = settings_.chunk_reuse_min;
    req.slots_per_document = settings_.slots_per_document;
    req.extra_context = std::move(extra);
    return req;
}

lsp::inline_completion_list completion_service::make_list(const std::string & uri, const std::vector<std::string> & inserts,
                                                          const std::string & selected, const lsp::range & replace,
                                                          uint64_t first_item_id) {
    lsp::inline_completion_list list;
    uint64_t item_id = first_item_id;
    for (const auto & insert : inserts) {
        lsp::inline_completion_item item;
        item.insertText = selected + insert;
        item.range = replace;
        // Accepting runs this command, which tells us (hearth/didAccept's twin) which
        // item was taken: the feedback that statistics use.
        lsp::command cmd;
        cmd.title = "hearth: accept completion";
        cmd.command = std::string(lsp::command_accept_completion);
        cmd.arguments.push_back(boost::json::object{{"uri", uri}, {"id", std::to_string(item_id++)}});
        item.command = std::move(cmd);
        list.items.push_back(std::move(item));
    }
    return list;
}

// The completion after `accepted` is inserted at the cursor, computed in the background (below
// every request, superseded by the document's next prefetch) and kept in the memory.
void completion_service::submit_prefetch(uint64_t owner, fim_request req, std::string before, std::string after,
                                         std::string accepted) {
    const std::string key = completion_key(owner, req.uri);
    std::string shown = before + accepted + after;
    const size_t cursor = before.size() + accepted.size();
    if (memory_.has(key, std::string_view(shown).substr(0, cursor), after)) return;   // already computed
    const fim_window w = cut_fim_window(shown, cursor, settings_.prefix_lines, settings_.suffix_lines);
    req.prefix = w.prefix;
    req.suffix = w.suffix;
    req.mode = detect_mode(shown, cursor);
    req.n_candidates = 1;
    job j;
    j.priority = job_priority::background;
    j.owner = owner;
    j.supersede_key = prefetch_key(key);
    j.dropped = [](drop_reason) {};
    j.run = [this, key, req = std::move(req), shown = std::move(shown), cursor](std::stop_token stop) {
        auto r = model_->complete(req, stop, {});
        if (!r || stop.stop_requested() || r->candidates.empty()) return;
        std::string insert = trim_completion(r->candidates.front().text, req.prefix, req.suffix, req.mode);
        if (insert.empty()) return;
        memory_.remember(key, std::string_view(shown).substr(0, cursor), std::string_view(shown).substr(cursor), {insert});
        ++prefetched_;
    };
    (void)sched_->submit(std::move(j));   // a full queue just means no prefetch
}

void completion_service::forget_document(uint64_t owner, std::string_view uri) { memory_.forget(completion_key(owner, uri)); }

completion_service::owner_context & completion_service::context_of(uint64_t owner) {
    auto it = contexts_.find(owner);
    if (it == contexts_.end())
        it = contexts_.emplace(owner, owner_context{context_ring(static_cast<size_t>(settings_.extra_context_chunks),
                                                                 settings_.extra_context_lines), "", 0}).first;
    return it->second;
}

void completion_service::document_opened(uint64_t owner, const lsp::document & d) {
    if (settings_.extra_context_chunks <= 0) return;
    std::lock_guard lock(context_mu_);
    context_of(owner).ring.add(d.uri(), d.text(), 0);
}

void completion_service::forget_owner(uint64_t owner) {
    std::lock_guard lock(context_mu_);
    contexts_.erase(owner);
}

std::vector<context_chunk> completion_service::extra_context_for(uint64_t owner, const lsp::document & doc, int64_t line,
                                                                 const lsp::document_store * docs) {
    if (settings_.extra_context_chunks <= 0) return {};
    std::lock_guard lock(context_mu_);
    owner_context & oc = context_of(owner);
    if (!oc.last_uri.empty() && oc.last_uri != doc.uri() && docs)
        if (const lsp::document * prev = docs->find(oc.last_uri)) oc.ring.add(oc.last_uri, prev->text(), oc.last_line);
    oc.last_uri = doc.uri();
    oc.last_line = line;
    return oc.ring.chunks_except(doc.uri());
}

}  // namespace hearth::daemon
