#include "daemon/completion_service.h"

#include <chrono>
#include <set>

#include <boost/json/object.hpp>
#include <spdlog/spdlog.h>

#include "daemon/fim_window.h"

namespace hearth::daemon {

std::string completion_key(uint64_t owner, std::string_view uri) { return std::to_string(owner) + "\n" + std::string(uri); }

completion_service::completion_service(std::shared_ptr<scheduler> sched, model_service * model, completion_settings settings)
    : sched_(std::move(sched)), model_(model), settings_(settings) {}

void completion_service::document_changed(uint64_t owner, std::string_view uri) { sched_->cancel_key(completion_key(owner, uri)); }

void completion_service::handle(uint64_t owner, const lsp::inline_completion_params & p, const lsp::request_context & ctx,
                                lsp::typed_responder<lsp::inline_completion_list> out) {
    using lsp::errc;
    if (!model_) {
        out.fail(errc::request_failed, "no model is loaded: start the daemon with --model PATH (or `model = ...` in config.toml)");
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
    const std::string & text = doc->text();
    lsp::range replace{p.position, p.position};
    std::string selected;
    size_t begin = doc->offset_of(p.position), end = begin;
    if (const auto & sel = p.context.selectedCompletionInfo) {
        replace = sel->range;
        selected = sel->text;
        begin = doc->offset_of(sel->range.start);
        end = std::max(begin, doc->offset_of(sel->range.end));
    }
    std::string shown = text.substr(0, begin) + selected + text.substr(end);
    const size_t cursor = begin + selected.size();

    const bool invoked = p.context.triggerKind == lsp::inline_completion_trigger_kind::invoked;
    fim_request req;
    req.uri = doc->uri();
    req.language_id = doc->language_id();
    const fim_window w = cut_fim_window(shown, cursor, settings_.prefix_lines, settings_.suffix_lines);
    req.prefix = w.prefix;
    req.suffix = w.suffix;
    req.mode = detect_mode(shown, cursor);
    req.n_predict = settings_.max_tokens;
    req.time_budget = std::chrono::milliseconds(settings_.time_budget_ms);
    req.n_candidates = invoked ? settings_.invoked_candidates : 1;

    const uint64_t first_item_id = next_item_id_.fetch_add(static_cast<uint64_t>(req.n_candidates));
    job j;
    j.priority = job_priority::completion;
    j.owner = owner;
    j.supersede_key = completion_key(owner, doc->uri());
    j.debounce = invoked ? std::chrono::milliseconds(0) : std::chrono::milliseconds(settings_.debounce_ms);
    j.dropped = [out](drop_reason r) {
        if (r == drop_reason::shutdown) out.fail(lsp::errc::request_cancelled, "the daemon is shutting down");
        else out.cancelled();
    };
    j.run = [this, out, req = std::move(req), cancel = ctx.cancel, replace, selected, first_item_id](std::stop_token stop) {
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
        lsp::inline_completion_list list;
        std::set<std::string> seen;
        uint64_t item_id = first_item_id;
        for (const auto & cand : r->candidates) {
            std::string insert = trim_completion(cand.text, req.suffix, req.mode);
            if (insert.empty() || !seen.insert(insert).second) continue;
            lsp::inline_completion_item item;
            item.insertText = selected + insert;
            item.range = replace;
            // Accepting runs this command, which tells us (hearth/didAccept's twin) which
            // item was taken: the feedback that prefetch and statistics use.
            lsp::command cmd;
            cmd.title = "hearth: accept completion";
            cmd.command = std::string(lsp::command_accept_completion);
            cmd.arguments.push_back(boost::json::object{{"uri", req.uri}, {"id", std::to_string(item_id++)}});
            item.command = std::move(cmd);
            list.items.push_back(std::move(item));
        }
        spdlog::debug("inline completion {}: {} item(s) in {:.1f} ms ({} prompt tokens, {} cached, {} generated)", req.uri,
                      list.items.size(), ms, r->timings.n_prompt_tokens, r->timings.n_cached_tokens, r->timings.n_generated);
        out.reply(list);
    };
    auto id = sched_->submit(std::move(j));
    if (!id) {
        out.fail(errc::server_busy, id.message());
        return;
    }
    ctx.cancel.on_cancel([weak = std::weak_ptr<scheduler>(sched_), job = *id] {
        if (auto s = weak.lock()) s->cancel(job);
    });
}

}  // namespace hearth::daemon
