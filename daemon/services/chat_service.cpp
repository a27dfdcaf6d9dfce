#include "daemon/services/chat_service.h"

#include <spdlog/spdlog.h>

#include "daemon/services/request_job.h"
#include "lsp/chat_stream.h"

namespace hearth::daemon {
namespace {

chat_intent to_chat_intent(lsp::chat_intent i) {
    switch (i) {
        case lsp::chat_intent::explain: return chat_intent::explain;
        case lsp::chat_intent::fix: return chat_intent::fix;
        case lsp::chat_intent::ask: return chat_intent::ask;
        case lsp::chat_intent::chat: break;
    }
    return chat_intent::chat;
}

}  // namespace

chat_service::chat_service(std::shared_ptr<scheduler> sched, model_service * model, chat_settings settings)
    : sched_(std::move(sched)), has_model_(model != nullptr), pipeline_(model, std::move(settings)) {}

void chat_service::handle(uint64_t owner, const lsp::chat_params & p, const lsp::request_context & ctx,
                          lsp::typed_responder<lsp::chat_result> out) {
    using lsp::errc;
    if (!has_model_) {
        out.fail(errc::request_failed, std::string(k_no_model_message));
        return;
    }
    if ((p.intent == lsp::chat_intent::chat || p.intent == lsp::chat_intent::ask) && p.prompt.empty()) {
        out.fail(errc::invalid_params, "hearth/chat: params.prompt: expected a question, got an empty string");
        return;
    }
    chat_input in;
    in.intent = to_chat_intent(p.intent);
    in.prompt = p.prompt;
    if (!p.textDocument.uri.empty()) {
        const lsp::document * doc = ctx.documents ? ctx.documents->find(p.textDocument.uri) : nullptr;
        if (!doc) {
            out.fail(errc::invalid_params, "hearth/chat: document '" + p.textDocument.uri + "' is not open");
            return;
        }
        in.uri = doc->uri();
        in.language_id = doc->language_id();
        const size_t b = doc->offset_of(p.range.start);
        const size_t e = std::max(b, doc->offset_of(p.range.end));
        in.selection = doc->text().substr(b, e - b);
        const uint32_t n = static_cast<uint32_t>(pipeline_.settings().context_lines);
        const uint32_t first = p.range.start.line > n ? p.range.start.line - n : 0;
        const size_t ctx_begin = doc->line_span(first).first;
        const auto last_span = doc->line_span(p.range.end.line + n);
        in.before = doc->text().substr(ctx_begin, b - ctx_begin);
        in.after = doc->text().substr(e, std::max(e, last_span.second) - e);
    }
    chat_request req = pipeline_.request_for(in);

    static constexpr const char * titles[] = {"hearth: chat", "hearth: explain", "hearth: fix", "hearth: ask"};
    const std::string title = titles[static_cast<int>(p.intent)];
    job j;
    j.priority = job_priority::chat;
    j.owner = owner;
    j.dropped = [out](drop_reason r) {
        if (r == drop_reason::shutdown) out.fail(lsp::errc::request_cancelled, "the daemon is shutting down");
        else out.cancelled();
    };
    j.run = [this, out, req = std::move(req), cancel = ctx.cancel, notify = ctx.notify, p, title](std::stop_token stop) {
        if (cancel.requested() || stop.stop_requested()) {
            out.cancelled();
            return;
        }
        lsp::chat_stream stream(notify, p, title);
        stream.begin();
        auto r = pipeline_.run(req, stop, [&stream](std::string_view piece) { stream.piece(piece); });
        stream.end();
        if (cancel.requested() || stop.stop_requested()) {
            out.cancelled();
            return;
        }
        if (!r) {
            spdlog::warn("chat failed: {}", r.message());
            out.fail(lsp::errc::request_failed, "chat failed: " + r.message());
            return;
        }
        ++served_;
        spdlog::debug("chat: {} tokens, stop: {}", r->timings.n_generated, stop_reason_name(r->stop));
        out.reply(lsp::chat_result{r->text});
    };
    submit_request_job(sched_, std::move(j), ctx, out);
}

}  // namespace hearth::daemon
