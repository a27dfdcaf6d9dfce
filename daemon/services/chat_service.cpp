#include "daemon/services/chat_service.h"

#include <spdlog/spdlog.h>

#include "daemon/services/request_job.h"
#include "lsp/chat_stream.h"

namespace hearth::daemon {

namespace {

std::string fenced(std::string_view lang, std::string_view code) {
    std::string s = "```";
    s += lang;
    s += "\n";
    s += code;
    if (!code.empty() && code.back() != '\n') s += "\n";
    s += "```\n";
    return s;
}

std::string_view file_name(std::string_view uri) {
    const size_t slash = uri.rfind('/');
    return slash == std::string_view::npos ? uri : uri.substr(slash + 1);
}

}  // namespace

std::vector<chat_message> build_chat_messages(const chat_input & in) {
    std::string user;
    const std::string where = in.uri.empty() ? std::string() : " from " + std::string(file_name(in.uri));
    const std::string & code = in.selection.empty() ? in.before : in.selection;
    switch (in.intent) {
        case lsp::chat_intent::explain:
            user = "Explain what this code" + where + " does.\n\n" + fenced(in.language_id, code);
            break;
        case lsp::chat_intent::fix:
            user = "Find the bug in this code" + where + " and fix it. Reply with the corrected code and one sentence on what was wrong.\n\n" +
                   fenced(in.language_id, code);
            break;
        case lsp::chat_intent::ask:
        case lsp::chat_intent::chat:
            user = in.prompt;
            if (!code.empty()) user += "\n\nThe code" + where + ":\n\n" + fenced(in.language_id, code);
            break;
    }
    if (!in.prompt.empty() && (in.intent == lsp::chat_intent::explain || in.intent == lsp::chat_intent::fix))
        user += "\n" + in.prompt + "\n";
    if (!in.selection.empty() && (!in.before.empty() || !in.after.empty())) {
        user += "\nFor context, the surrounding code:\n\n" +
                fenced(in.language_id, in.before + "<selection>\n" + in.after);
    }
    return {
        {"system", "You are hearth, a coding assistant inside the user's editor. Answer precisely and briefly; "
                   "put code in fenced blocks."},
        {"user", std::move(user)},
    };
}

chat_service::chat_service(std::shared_ptr<scheduler> sched, model_service * model, chat_settings settings)
    : sched_(std::move(sched)), model_(model), settings_(settings) {}

void chat_service::handle(uint64_t owner, const lsp::chat_params & p, const lsp::request_context & ctx,
                          lsp::typed_responder<lsp::chat_result> out) {
    using lsp::errc;
    if (!model_) {
        out.fail(errc::request_failed, std::string(k_no_model_message));
        return;
    }
    if ((p.intent == lsp::chat_intent::chat || p.intent == lsp::chat_intent::ask) && p.prompt.empty()) {
        out.fail(errc::invalid_params, "hearth/chat: params.prompt: expected a question, got an empty string");
        return;
    }
    chat_input in;
    in.intent = p.intent;
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
        const uint32_t n = static_cast<uint32_t>(settings_.context_lines);
        const uint32_t first = p.range.start.line > n ? p.range.start.line - n : 0;
        const size_t ctx_begin = doc->line_span(first).first;
        const auto last_span = doc->line_span(p.range.end.line + n);
        in.before = doc->text().substr(ctx_begin, b - ctx_begin);
        in.after = doc->text().substr(e, std::max(e, last_span.second) - e);
    }
    chat_request req;
    req.uri = in.uri;
    req.messages = build_chat_messages(in);
    req.n_predict = settings_.max_tokens;
    req.time_budget = std::chrono::milliseconds(settings_.time_budget_ms);
    req.show_reasoning = settings_.show_reasoning;

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
        auto r = model_->chat(req, stop, [&stream](std::string_view piece) { stream.piece(piece); });
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
