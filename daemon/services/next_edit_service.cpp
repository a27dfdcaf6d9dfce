#include "daemon/services/next_edit_service.h"

#include <chrono>

#include <spdlog/spdlog.h>

#include "daemon/services/completion_service.h"
#include "daemon/services/request_job.h"

namespace hearth::daemon {
namespace {
// The scheduler keys: a document's predictions (newest wins, an edit cancels them), and a
// connection's next-edit warm-up (one at a time, the newest place wins).
std::string next_edit_key(uint64_t owner, std::string_view uri) { return "next-edit\n" + completion_key(owner, uri); }
std::string warm_up_key(uint64_t owner) { return "next-edit warm-up\n" + std::to_string(owner); }
}  // namespace

next_edit_ask next_edit_ask_of(const lsp::document & d, const lsp::position & at) {
    next_edit_ask ask;
    ask.uri = d.uri();
    ask.language_id = d.language_id();
    ask.text = d.text();
    ask.cursor = d.offset_of(at);
    for (const auto & e : d.history().edits()) ask.edits.push_back({e.offset, e.removed, e.inserted});
    return ask;
}

next_edit_service::next_edit_service(std::shared_ptr<scheduler> sched, model_service * model, next_edit_settings settings)
    : sched_(std::move(sched)), has_model_(model != nullptr), pipeline_(model, settings) {}

void next_edit_service::document_changed(uint64_t owner, std::string_view uri) { sched_->cancel_key(next_edit_key(owner, uri)); }

void next_edit_service::warm_up(uint64_t owner, const lsp::document & d, const lsp::position & at) {
    if (!has_model_ || !pipeline_.settings().enabled || !pipeline_.settings().warm_up) return;
    job j;
    j.priority = job_priority::background;
    j.owner = owner;
    j.supersede_key = warm_up_key(owner);
    j.yields = true;
    j.dropped = [](drop_reason) {};
    j.run = [this, ask = next_edit_ask_of(d, at)](std::stop_token stop) {
        if (stop.stop_requested()) return;
        if (auto s = pipeline_.warm_up(ask, stop); !s) spdlog::debug("next-edit warm-up of {} failed: {}", ask.uri, s.message());
    };
    (void)sched_->submit(std::move(j));   // a full queue just means no warm-up
}

void next_edit_service::handle(uint64_t owner, const lsp::next_edit_params & p, const lsp::request_context & ctx,
                               lsp::typed_responder<lsp::next_edit_result> out) {
    if (!pipeline_.settings().enabled) {
        out.reply(lsp::next_edit_result{});
        return;
    }
    if (!has_model_) {
        out.fail(lsp::errc::request_failed, std::string(k_no_model_message));
        return;
    }
    const lsp::document * doc = ctx.documents ? ctx.documents->find(p.textDocument.uri) : nullptr;
    if (!doc) {
        out.fail(lsp::errc::invalid_params, "hearth/nextEdit: document " + p.textDocument.uri + " is not open");
        return;
    }
    // A warm-up not begun would only compute what this request computes; one running is
    // stopped by this request's arrival (its rows stay in the slot).
    sched_->cancel_queued_key(warm_up_key(owner));
    job j;
    j.priority = job_priority::completion;
    j.owner = owner;
    j.supersede_key = next_edit_key(owner, doc->uri());
    j.dropped = [out](drop_reason r) {
        if (r == drop_reason::shutdown) out.fail(lsp::errc::request_cancelled, "the daemon is shutting down");
        else out.cancelled();
    };
    // The document is copied: the worker converts offsets to positions with its line index.
    j.run = [this, out, doc = *doc, ask = next_edit_ask_of(*doc, p.position), cancel = ctx.cancel](std::stop_token stop) {
        if (cancel.requested() || stop.stop_requested()) return void(out.cancelled());
        const auto t0 = std::chrono::steady_clock::now();
        auto r = pipeline_.run(ask, stop);
        if (cancel.requested() || stop.stop_requested()) return void(out.cancelled());
        if (!r) {
            spdlog::warn("next edit for {} failed: {}", ask.uri, r.message());
            return void(out.fail(lsp::errc::request_failed, "hearth/nextEdit failed: " + r.message()));
        }
        lsp::next_edit_result res;
        for (const auto & e : *r) {
            const lsp::range range{doc.position_of(e.begin), doc.position_of(e.end)};
            const lsp::range show{{range.start.line, 0}, {range.start.line, 0}};
            res.edits.push_back({std::to_string(next_id_++), {doc.uri(), doc.version()}, range, e.text, show});
        }
        last_ms_.store(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        ++served_;
        if (!res.edits.empty()) ++predicted_;
        out.reply(res);
    };
    submit_request_job(sched_, std::move(j), ctx, out);
}

}  // namespace hearth::daemon
