// server: the transport-agnostic protocol state machine of one connection. The transport
// feeds it de-framed bodies (handle_body) and gives it a send callback for outgoing bodies;
// the server owns the lifecycle, the document store, the in-flight table, the limits, and
// calls the daemon's typed handlers. It never blocks and never runs model work.
//
// Lifecycle: before `initialize`, requests get -32002 and notifications are dropped (except
// `exit`). A second `initialize` gets -32600. After `shutdown`, requests get -32600 and
// notifications other than `exit` are dropped. `exit` sets exit_requested(); exit_code() is
// 0 if `shutdown` came first, else 1. On exit or destruction every request still in flight
// is cancelled and its later answer is dropped.
// Unknown requests get -32601; unknown notifications and all `$/` ones we do not handle are
// ignored. Responses from the client are logged and dropped (we send no requests).
//
// Requests are answered exactly once: a request handler receives a typed_responder that it
// (or another thread it hands it to) must complete; if the last copy is dropped unanswered
// the client still gets -32603. `$/cancelRequest` flips the request's cancel_token; the
// handler answers -32800 (responder::cancelled()) when it stops. At most
// max_requests_in_flight requests are open at once; more get the server-busy error.
//
// Threads: handle_body(), documents(), and every handler call happen on ONE thread, the
// connection's (an Asio strand in the daemon). Handlers must return quickly; long work goes
// to another thread with copies of what it needs. responders, cancel_tokens and notifier
// may be used from any thread. The send callback may be called from any thread (never
// re-entrantly from inside itself) and stops being called once the server is destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/result.h"
#include "lsp/cancel.h"
#include "lsp/document_store.h"
#include "lsp/jsonrpc.h"
#include "lsp/outgoing.h"
#include "lsp/responder.h"
#include "lsp/types.h"

namespace hearth::lsp {

struct server_limits {
    size_t max_requests_in_flight = 32;
    parse_limits json;
    document_limits documents;
};

// What a request handler gets besides its params. `documents` is valid only during the
// handler call (on the server thread).
struct request_context {
    request_id id;
    cancel_token cancel;
    notifier notify;
    const document_store * documents = nullptr;
};

// Every handler is optional. A request whose handler is missing is answered -32601 (the
// capability is then not real); a missing notification handler just skips the callback.
struct handlers {
    // Called once with the client's params; may fill serverInfo or refuse with an error
    // (answered -32603 with its message). The position encoding is chosen by the server.
    std::function<status(const initialize_params &, initialize_result &)> on_initialize;
    std::function<void()> on_initialized;
    std::function<void()> on_shutdown;   // before the shutdown reply; cancel work here

    // After the document store has applied the change (the handler can read the new text).
    // Any edit should invalidate in-flight work on that uri. A didOpen of a uri already open
    // replaces it and calls on_did_open again; a document the store closes itself (grown
    // past max_document_bytes) gets on_did_close.
    std::function<void(const document &, const document_store &)> on_did_open;   // the store: the other open documents
    std::function<void(const document &)> on_did_change;
    std::function<void(std::string_view uri)> on_did_close;
    std::function<void(const document &)> on_did_save;
    // hearth/cursorRest on an open document (one that is not open is ignored): the cursor
    // came to rest at this position, in the negotiated encoding.
    std::function<void(const document &, const position &, const document_store &)> on_cursor_rest;

    std::function<void(const inline_completion_params &, const request_context &,
                       typed_responder<inline_completion_list>)> on_inline_completion;
    // hearth/chat, and workspace/executeCommand hearth.explain / hearth.fix / hearth.ask
    // (params.intent says which; the command's reply is the chat_result too).
    std::function<void(const chat_params &, const request_context &,
                       typed_responder<chat_result>)> on_chat;
    std::function<void(const request_context &, typed_responder<status_result>)> on_status;
    // hearth/nextEdit on an open document (one that is not open is refused as completions are).
    std::function<void(const next_edit_params &, const request_context &, typed_responder<next_edit_result>)> on_next_edit;

    std::function<void(const did_show_completion_params &)> on_did_show_completion;
    std::function<void(const did_partially_accept_completion_params &)> on_did_partially_accept_completion;
    // hearth/didAccept, and workspace/executeCommand hearth.acceptCompletion (replied null).
    std::function<void(const completion_feedback_params &)> on_did_accept;
    std::function<void(const completion_feedback_params &)> on_did_reject;
};

enum class lifecycle { uninitialized, running, shut_down, exited };

class server {
public:
    server(handlers h, send_fn send, server_limits limits = {});
    ~server();   // cancels what is in flight; no send after it returns
    server(const server &) = delete;
    server & operator=(const server &) = delete;

    // One incoming message body (already de-framed). Never throws.
    void handle_body(std::string_view body);
    // Answers a body the framing layer refused but could skip (too large, bad charset):
    // -32600 with id null, so the client's log shows why a message went unanswered.
    void reject_unreadable(std::string_view reason);

    lifecycle state() const { return state_; }
    bool exit_requested() const { return state_ == lifecycle::exited; }
    int exit_code() const { return shutdown_received_ ? 0 : 1; }

    document_store & documents() { return docs_; }
    const document_store & documents() const { return docs_; }
    notifier notify() const { return notifier(channel_); }
    size_t requests_in_flight() const;
    std::optional<client_info> client() const { return client_; }

private:
    struct in_flight_table;
    void dispatch_request(request && r);
    void dispatch_notification(notification && n);
    bool handle_lifecycle_request(const request & r, const responder & out);
    void handle_execute_command(const request & r, const request_context & ctx, responder out);
    void log_to_client(message_type type, std::string text) const;
    void send_error(const request_id & id, const rpc_error & e) const;
    void cancel_all();

    handlers h_;
    server_limits limits_;
    std::shared_ptr<outgoing_channel> channel_;
    std::shared_ptr<in_flight_table> in_flight_;
    document_store docs_;
    lifecycle state_ = lifecycle::uninitialized;
    bool shutdown_received_ = false;
    std::optional<client_info> client_;
};

// Chooses the position encoding: the first of the client's positionEncodings that we
// support (in the client's order of preference), else utf-16 as the spec requires.
position_encoding negotiate_position_encoding(const std::vector<std::string> & offered);

}  // namespace hearth::lsp
