#include "daemon/services/completion_service.h"

#include <algorithm>
#include <cstdlib>
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
// The scheduler key of a connection's warm-up: one at a time, the newest place wins.
std::string warm_up_key(uint64_t owner) { return "warm-up\n" + std::to_string(owner); }
// A file just opened is warmed at its top once the editor has stopped opening files (an
// editor restoring its tabs opens them all at once; only the last one is warmed).
constexpr std::chrono::milliseconds k_open_warm_up_delay{300};
// A request this close to where the warm-up was asked for shares its window's head (the
// window is 64 lines above the cursor line): it waits for the warm-up rather than stop it.
constexpr int64_t k_warm_up_lines = 4;
}  // namespace

completion_service::completion_service(std::shared_ptr<scheduler> sched, model_service * model, completion_settings settings)
    : sched_(std::move(sched)), has_model_(model != nullptr), pipeline_(model, settings) {}

// A warm-up goes on through edits: typing where it was asked for changes only the cursor line
// of its window, and the request after it needs the rest.
void completion_service::document_changed(uint64_t owner, std::string_view uri) { sched_->cancel_key(completion_key(owner, uri)); }

bool completion_service::continues_warm_up(uint64_t owner, const std::string & uri, int64_t line) {
    std::lock_guard lock(warm_mu_);
    auto it = warm_places_.find(owner);
    return it != warm_places_.end() && it->second.uri == uri && std::abs(it->second.line - line) <= k_warm_up_lines;
}

std::vector<context_chunk> completion_service::extra_context_of(uint64_t owner, const lsp::document & d, int64_t line,
                                                                const lsp::document_store * docs) {
    return pipeline_.extra_context(owner, d.uri(), line, [docs](const std::string & uri) {
        const lsp::document * other = docs ? docs->find(uri) : nullptr;
        return other ? std::optional<std::string>(other->text()) : std::nullopt;
    });
}

void completion_service::warm_up(uint64_t owner, const lsp::document & d, const lsp::position & at,
                                 const lsp::document_store & docs, std::chrono::milliseconds debounce) {
    if (!has_model_ || !pipeline_.settings().warm_up) return;
    completion_ask ask;
    ask.key = completion_key(owner, d.uri());
    ask.uri = d.uri();
    ask.language_id = d.language_id();
    ask.text = d.text();
    ask.cursor = d.offset_of(at);
    ask.extra = extra_context_of(owner, d, at.line, &docs);
    {
        std::lock_guard lock(warm_mu_);
        warm_places_[owner] = {d.uri(), at.line};
    }
    job j;
    j.priority = job_priority::background;
    j.owner = owner;
    j.supersede_key = warm_up_key(owner);
    j.yields = true;
    j.debounce = debounce;
    j.dropped = [](drop_reason) {};
    j.run = [this, req = pipeline_.request_for(ask)](std::stop_token stop) {
        if (stop.stop_requested()) return;
        if (auto s = pipeline_.warm_up(req, stop); !s) spdlog::debug("warm-up of {} failed: {}", req.uri, s.message());
    };
    (void)sched_->submit(std::move(j));   // a full queue just means no warm-up
}

void completion_service::handle(uint64_t owner, const lsp::inline_completion_params & p, const lsp::request_context & ctx,
                                lsp::typed_responder<lsp::inline_completion_list> out) {
    using lsp::errc;
    if (!has_model_) {
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

    completion_ask ask;
    ask.key = completion_key(owner, doc->uri());
    ask.uri = doc->uri();
    ask.language_id = doc->language_id();
    ask.text = std::move(shown);
    ask.cursor = cursor;
    ask.invoked = p.context.triggerKind == lsp::inline_completion_trigger_kind::invoked;
    ask.extra = extra_context_of(owner, *doc, p.position.line, ctx.documents);
    // At the warm-up's place the request continues a warm-up that runs (and waits for it); one
    // not begun yet, or one elsewhere, would only redo or overwrite the slot's rows behind it.
    const bool after_warm_up = continues_warm_up(owner, ask.uri, p.position.line);
    if (after_warm_up) sched_->cancel_queued_key(warm_up_key(owner));
    else sched_->cancel_key(warm_up_key(owner));
    // Typed ahead (or accepted, then prefetched): answered from memory, no model run. Not over
    // a selected popup item (the memory knows the document, not the widget).
    const bool from_popup = !selected.empty() || p.context.selectedCompletionInfo.has_value();
    if (!from_popup) {
        if (auto hit = pipeline_.recall(ask)) {
            sched_->cancel_key(ask.key);   // an older request for this document is stale now
            const uint64_t first = next_item_id_.fetch_add(hit->items.size());
            ++served_;
            out.reply(make_list(doc->uri(), hit->items, selected, replace, first));
            submit_prefetch(owner, ask, hit->items.front());
            return;
        }
    }
    // The model is needed now: a prefetch still running for this document yields to it.
    sched_->cancel_key(prefetch_key(ask.key));

    fim_request req = pipeline_.request_for(ask);
    const uint64_t first_item_id = next_item_id_.fetch_add(static_cast<uint64_t>(req.n_candidates));
    job j;
    j.priority = job_priority::completion;
    j.owner = owner;
    if (after_warm_up) j.continues = warm_up_key(owner);
    j.supersede_key = ask.key;
    j.debounce = ask.invoked ? std::chrono::milliseconds(0) : std::chrono::milliseconds(pipeline_.settings().debounce_ms);
    j.dropped = [out](drop_reason r) {
        if (r == drop_reason::shutdown) out.fail(lsp::errc::request_cancelled, "the daemon is shutting down");
        else out.cancelled();
    };
    j.run = [this, out, owner, ask = std::move(ask), req = std::move(req), cancel = ctx.cancel, replace, selected,
             first_item_id](std::stop_token stop) {
        if (cancel.requested() || stop.stop_requested()) {
            out.cancelled();
            return;
        }
        // Remembered before the reply goes out: the client's next keystroke may arrive at once.
        auto r = pipeline_.run(ask, req, stop, /*remember=*/selected.empty());
        if (cancel.requested() || stop.stop_requested()) {
            out.cancelled();
            return;
        }
        if (!r) {
            spdlog::warn("inline completion for {} failed: {}", req.uri, r.message());
            out.fail(lsp::errc::request_failed, "inline completion failed: " + r.message());
            return;
        }
        last_ms_.store(r->ms);
        ++served_;
        out.reply(make_list(req.uri, r->items, selected, replace, first_item_id));
        if (selected.empty() && !r->items.empty()) submit_prefetch(owner, ask, r->items.front());
    };
    submit_request_job(sched_, std::move(j), ctx, out);
}

boost::json::object completion_service::outcomes_json() const {
    boost::json::object ends, trimmed, emptied;
    const completion_outcomes & o = pipeline_.outcomes();
    for (size_t i = 0; i < k_n_stop_reasons; ++i) ends[stop_reason_name(static_cast<stop_reason>(i))] = o.ends[i].load();
    for (size_t i = 0; i < k_n_cleanup_filters; ++i) {
        const auto f = static_cast<cleanup_filter>(i);
        if (f != cleanup_filter::none) trimmed[cleanup_filter_name(f)] = o.trimmed[i].load();
        emptied[f == cleanup_filter::none ? std::string_view("model") : cleanup_filter_name(f)] = o.emptied[i].load();
    }
    return {{"empty", o.empty.load()}, {"emptyBecause", std::move(emptied)}, {"ends", std::move(ends)}, {"trimmed", std::move(trimmed)}};
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
void completion_service::submit_prefetch(uint64_t owner, const completion_ask & shown, const std::string & accepted) {
    auto next = pipeline_.after_accept(shown, accepted);
    if (!next) return;
    job j;
    j.priority = job_priority::background;
    j.owner = owner;
    j.supersede_key = prefetch_key(next->key);
    j.dropped = [](drop_reason) {};
    j.run = [this, next = std::move(*next)](std::stop_token stop) { (void)pipeline_.prefetch(next, stop); };
    (void)sched_->submit(std::move(j));   // a full queue just means no prefetch
}

void completion_service::forget_document(uint64_t owner, std::string_view uri) { pipeline_.forget(completion_key(owner, uri)); }

void completion_service::document_opened(uint64_t owner, const lsp::document & d, const lsp::document_store & docs) {
    pipeline_.document_opened(owner, d.uri(), d.text());
    warm_up(owner, d, lsp::position{0, 0}, docs, k_open_warm_up_delay);
}

void completion_service::forget_owner(uint64_t owner) {
    pipeline_.forget_owner(owner);
    std::lock_guard lock(warm_mu_);
    warm_places_.erase(owner);
}

}  // namespace hearth::daemon
