// An in-memory LSP connection with deterministic handlers, for the transcript tests, the
// server tests and the JSON-RPC fuzz target. The handlers answer from the document store
// so that transcripts check what the protocol layer did to the text:
//  - inline completion: one item "«<line text before the cursor>»" at the cursor (two for
//    triggerKind Invoked, the second "«…»2"); on a uri containing "slow" the request is held
//    until cancelled (then answered -32800) or release_held() is called;
//  - chat: streams the prompt word by word (chat_stream), answers with
//    "<intent>: <selected text>|<prompt>"; the prompt "wait" holds it until cancelled;
//  - status: counts of what reached the handlers.
// Thread-safety: single-threaded, like a transport's strand.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "lsp/chat_stream.h"
#include "lsp/connection.h"

namespace hearth::lsp::testing {

struct harness {
    std::deque<std::string> outgoing;   // framed bytes, in send order
    int did_open = 0, did_change = 0, did_close = 0, did_save = 0;
    int shown = 0, partially_accepted = 0, accepted = 0, rejected = 0;
    std::vector<typed_responder<inline_completion_list>> held;
    connection conn;

    explicit harness(server_limits limits = {}, framing_limits framing = {})
        : conn(make_handlers(), [this](std::string bytes) { outgoing.push_back(std::move(bytes)); }, limits, framing) {}

    // Unframes everything sent so far.
    std::vector<std::string> take_bodies() {
        std::vector<std::string> bodies;
        std::vector<frame_item> items;
        frame_reader r;
        while (!outgoing.empty()) {
            r.feed(outgoing.front(), items);
            outgoing.pop_front();
        }
        for (auto & i : items) bodies.push_back(std::get<std::string>(i));
        return bodies;
    }

    bool send(std::string_view body) { return conn.feed(frame_message(body)); }

    void release_held() {
        for (auto & r : held) r.reply(inline_completion_list{{inline_completion_item{"released", {}, {}, {}}}});
        held.clear();
    }

private:
    handlers make_handlers() {
        handlers h;
        h.on_initialize = [](const initialize_params & p, initialize_result & r) -> status {
            if (p.initializationOptions.is_object() && p.initializationOptions.get_object().contains("refuse"))
                return fail("refused by initializationOptions");
            r.serverInfo.version = "test";
            return {};
        };
        h.on_did_open = [this](const document &, const document_store &) { ++did_open; };
        h.on_did_change = [this](const document &) { ++did_change; };
        h.on_did_close = [this](std::string_view) { ++did_close; };
        h.on_did_save = [this](const document &) { ++did_save; };
        h.on_did_show_completion = [this](const did_show_completion_params &) { ++shown; };
        h.on_did_partially_accept_completion = [this](const did_partially_accept_completion_params &) { ++partially_accepted; };
        h.on_did_accept = [this](const completion_feedback_params &) { ++accepted; };
        h.on_did_reject = [this](const completion_feedback_params &) { ++rejected; };
        h.on_inline_completion = [this](const inline_completion_params & p, const request_context & ctx,
                                        typed_responder<inline_completion_list> out) {
            const document * d = ctx.documents->find(p.textDocument.uri);
            const size_t cursor = d->offset_of(p.position);
            const size_t line_begin = d->line_span(d->position_of(cursor).line).first;
            const std::string before = d->text().substr(line_begin, cursor - line_begin);
            if (p.textDocument.uri.find("slow") != std::string::npos) {
                ctx.cancel.on_cancel([out] { out.cancelled(); });
                held.push_back(out);
                return;
            }
            inline_completion_list list;
            const position at = d->position_of(cursor);
            list.items.push_back({"«" + before + "»", std::nullopt, range{at, at}, std::nullopt});
            if (p.context.triggerKind == inline_completion_trigger_kind::invoked)
                list.items.push_back({"«" + before + "»2", std::nullopt, range{at, at}, std::nullopt});
            out.reply(list);
        };
        // hearth/nextEdit: one edit per edit of the document's history, that edit undone, so a
        // transcript sees what the history holds.
        h.on_next_edit = [](const next_edit_params & p, const request_context & ctx, typed_responder<next_edit_result> out) {
            const document * d = ctx.documents->find(p.textDocument.uri);
            next_edit_result r;
            int n = 0;
            for (const auto & e : d->history().edits()) {
                const range at{d->position_of(e.offset), d->position_of(e.offset + e.inserted.size())};
                r.edits.push_back({std::to_string(++n), {d->uri(), d->version()}, at, e.removed, range{{at.start.line, 0}, {at.start.line, 0}}});
            }
            out.reply(r);
        };
        h.on_chat = [](const chat_params & p, const request_context & ctx, typed_responder<chat_result> out) {
            const document * d = ctx.documents->find(p.textDocument.uri);
            const size_t b = d->offset_of(p.range.start), e = d->offset_of(p.range.end);
            const std::string selected = d->text().substr(std::min(b, e), e > b ? e - b : b - e);
            static const char * intents[] = {"chat", "explain", "fix", "ask"};
            auto stream = std::make_shared<chat_stream>(ctx.notify, p);
            stream->begin();
            if (p.prompt == "wait") {
                ctx.cancel.on_cancel([stream, out] {
                    stream->end();
                    out.cancelled();
                });
                return;
            }
            size_t pos = 0;
            while (pos < p.prompt.size()) {
                size_t next = p.prompt.find(' ', pos);
                next = next == std::string::npos ? p.prompt.size() : next + 1;
                stream->piece(p.prompt.substr(pos, next - pos));
                pos = next;
            }
            stream->end();
            out.reply(chat_result{std::string(intents[static_cast<int>(p.intent)]) + ": " + selected + "|" + stream->text()});
        };
        h.on_status = [this](const request_context &, typed_responder<status_result> out) {
            status_result s;
            s.model = "test-model";
            s.requestsInFlight = static_cast<uint32_t>(conn.protocol().requests_in_flight());
            s.completionsShown = static_cast<uint64_t>(shown);
            s.completionsAccepted = static_cast<uint64_t>(accepted);
            s.completionsRejected = static_cast<uint64_t>(rejected);
            s.extra["documents"] = boost::json::object{{"open", did_open}, {"changed", did_change}, {"closed", did_close},
                                                       {"saved", did_save}, {"partiallyAccepted", partially_accepted}};
            out.reply(s);
        };
        return h;
    }
};

}  // namespace hearth::lsp::testing
