#include "lsp/server.h"

#include <exception>
#include <vector>

#include "lsp/log.h"

namespace hearth::lsp {

// The requests of this connection that are not answered yet, keyed by id. Shared with the
// responders (which erase their entry when answered, from any thread), hence the mutex.
struct server::in_flight_table {
    std::mutex mu;
    std::map<request_id, cancel_source> entries;
};

position_encoding negotiate_position_encoding(const std::vector<std::string> & offered) {
    for (const auto & name : offered) {
        if (name == "utf-8") return position_encoding::utf8;
        if (name == "utf-16") return position_encoding::utf16;
        if (name == "utf-32") return position_encoding::utf32;
    }
    return position_encoding::utf16;
}

server::server(handlers h, send_fn send, server_limits limits)
    : h_(std::move(h)), limits_(limits), channel_(std::make_shared<outgoing_channel>(std::move(send))),
      in_flight_(std::make_shared<in_flight_table>()), docs_(limits.documents) {}

server::~server() {
    channel_->close();   // first, so that handlers answering their cancellation send nothing
    cancel_all();
}

size_t server::requests_in_flight() const {
    std::lock_guard lock(in_flight_->mu);
    return in_flight_->entries.size();
}

void server::cancel_all() {
    std::vector<cancel_source> sources;
    {
        std::lock_guard lock(in_flight_->mu);
        for (auto & [id, src] : in_flight_->entries) sources.push_back(src);
    }
    for (auto & s : sources) s.cancel();
}

void server::send_error(const request_id & id, const rpc_error & e) const {
    channel_->send(error_body(id, e));
}

void server::log_to_client(message_type type, std::string text) const {
    logger().log(type == message_type::error ? spdlog::level::err : spdlog::level::warn, "{}", text);
    // Before the initialize reply the client may not be sent anything but a few notifications;
    // a notification arriving then is dropped anyway, so this is only a log line.
    if (state_ == lifecycle::running || state_ == lifecycle::shut_down) notify().log_message(type, text);
}

void server::reject_unreadable(std::string_view reason) {
    if (state_ == lifecycle::exited) return;
    send_error(request_id(), rpc_error{errc::invalid_request, std::string(reason)});
}

void server::handle_body(std::string_view body) {
    if (state_ == lifecycle::exited) return;
    message m = parse_message(body, limits_.json);
    try {
        if (auto * r = std::get_if<request>(&m)) {
            dispatch_request(std::move(*r));
        } else if (auto * n = std::get_if<notification>(&m)) {
            dispatch_notification(std::move(*n));
        } else if (auto * bad = std::get_if<invalid_message>(&m)) {
            logger().warn("invalid message: {}", bad->error.message);
            send_error(bad->id, bad->error);
        } else {
            const auto & resp = std::get<response>(m);
            logger().warn("response to request {} which this server never sent; dropped", resp.id.to_string());
        }
    } catch (const std::exception & e) {
        // A handler threw: never let it cross into the transport.
        logger().error("internal error while handling a message: {}", e.what());
    }
}

bool server::handle_lifecycle_request(const request & r, const responder & out) {
    if (r.method == "initialize") {
        auto params = parse_params<initialize_params>(r.params, r.method);
        if (!params) {
            out.fail(errc::invalid_params, params.message());
            return true;
        }
        initialize_result res;
        res.positionEncoding = negotiate_position_encoding(params->capabilities.general.positionEncodings);
        if (h_.on_initialize) {
            if (status s = h_.on_initialize(*params, res); !s) {
                out.fail(errc::request_failed, "initialize: " + s.message());
                return true;
            }
        }
        docs_.set_encoding(res.positionEncoding);
        client_ = params->clientInfo;
        state_ = lifecycle::running;
        logger().info("initialized: client '{}', position encoding {}", client_ ? client_->name : "unknown",
                      position_encoding_name(res.positionEncoding));
        out.reply(boost::json::value_from(res));
        return true;
    }
    if (r.method == "shutdown") {
        state_ = lifecycle::shut_down;
        shutdown_received_ = true;
        if (h_.on_shutdown) h_.on_shutdown();
        // Work still running is of no use to a client that is leaving.
        std::vector<cancel_source> others;
        {
            std::lock_guard lock(in_flight_->mu);
            for (auto & [id, src] : in_flight_->entries)
                if (id != r.id) others.push_back(src);
        }
        for (auto & s : others) s.cancel();
        out.reply(nullptr);
        return true;
    }
    return false;
}

void server::dispatch_request(request && r) {
    if (state_ == lifecycle::uninitialized && r.method != "initialize") {
        send_error(r.id, {errc::server_not_initialized, r.method + ": the server is not initialized yet (send initialize first)"});
        return;
    }
    if (state_ == lifecycle::shut_down) {
        send_error(r.id, {errc::shutting_down, r.method + ": the server is shutting down (shutdown was received)"});
        return;
    }
    if (state_ == lifecycle::running && r.method == "initialize") {
        send_error(r.id, {errc::invalid_request, "initialize: the server is already initialized"});
        return;
    }

    cancel_source cancel;
    std::optional<rpc_error> refused;
    {
        std::lock_guard lock(in_flight_->mu);
        // initialize and shutdown are answered at once, so they never count against the limit:
        // a client with its slots full must still be able to shut down.
        const bool lifecycle_request = r.method == "initialize" || r.method == "shutdown";
        if (in_flight_->entries.contains(r.id)) {
            refused = rpc_error{errc::invalid_request, r.method + ": request id " + r.id.to_string() + " is already in flight"};
        } else if (!lifecycle_request && in_flight_->entries.size() >= limits_.max_requests_in_flight) {
            refused = rpc_error{errc::server_busy, r.method + ": server busy: " + std::to_string(limits_.max_requests_in_flight) +
                                                       " requests are already in flight on this connection"};
        } else {
            in_flight_->entries.emplace(r.id, cancel);
        }
    }
    if (refused) return send_error(r.id, *refused);
    std::weak_ptr<in_flight_table> table = in_flight_;
    responder out(r.id, r.method, channel_, [table](const request_id & id) {
        if (auto t = table.lock()) {
            std::lock_guard lock(t->mu);
            t->entries.erase(id);
        }
    });
    const request_context ctx{r.id, cancel.token(), notify(), &docs_};

    try {
        if (handle_lifecycle_request(r, out)) return;

        auto not_found = [&] { out.fail(errc::method_not_found, r.method + ": method not found"); };
        auto require_open = [&](const std::string & uri) {
            if (docs_.find(uri)) return true;
            out.fail(errc::invalid_params, r.method + ": document " + uri + " is not open");
            return false;
        };

        if (r.method == "textDocument/inlineCompletion") {
            if (!h_.on_inline_completion) return not_found();
            auto p = parse_params<inline_completion_params>(r.params, r.method);
            if (!p) return void(out.fail(errc::invalid_params, p.message()));
            if (!require_open(p->textDocument.uri)) return;
            h_.on_inline_completion(*p, ctx, typed_responder<inline_completion_list>(out));
        } else if (r.method == "hearth/chat") {
            if (!h_.on_chat) return not_found();
            auto p = parse_params<chat_params>(r.params, r.method);
            if (!p) return void(out.fail(errc::invalid_params, p.message()));
            if (!require_open(p->textDocument.uri)) return;
            h_.on_chat(*p, ctx, typed_responder<chat_result>(out));
        } else if (r.method == "hearth/nextEdit") {
            if (!h_.on_next_edit) return not_found();
            auto p = parse_params<next_edit_params>(r.params, r.method);
            if (!p) return void(out.fail(errc::invalid_params, p.message()));
            if (!require_open(p->textDocument.uri)) return;
            h_.on_next_edit(*p, ctx, typed_responder<next_edit_result>(out));
        } else if (r.method == "hearth/status") {
            if (!h_.on_status) return not_found();
            h_.on_status(ctx, typed_responder<status_result>(out));
        } else if (r.method == "workspace/executeCommand") {
            handle_execute_command(r, ctx, out);
        } else {
            not_found();
        }
    } catch (const std::exception & e) {
        logger().error("{}: handler threw: {}", r.method, e.what());
        if (!out.answered()) out.fail(errc::internal_error, r.method + ": internal error: " + e.what());
    }
}

void server::handle_execute_command(const request & r, const request_context & ctx, responder out) {
    auto p = parse_params<execute_command_params>(r.params, r.method);
    if (!p) return void(out.fail(errc::invalid_params, p.message()));
    if (p->command == command_accept_completion) {
        if (p->arguments.empty()) {
            return void(out.fail(errc::invalid_params, std::string(command_accept_completion) +
                                                         ": invalid params: params.arguments: expected one argument {uri, ...}"));
        }
        auto fb = parse_params<completion_feedback_params>(p->arguments[0], command_accept_completion);
        if (!fb) return void(out.fail(errc::invalid_params, fb.message()));
        if (h_.on_did_accept) h_.on_did_accept(*fb);
        out.reply(nullptr);
        return;
    }
    if (p->command == command_explain || p->command == command_fix || p->command == command_ask) {
        if (!h_.on_chat) return void(out.fail(errc::method_not_found, p->command + ": command not served"));
        auto c = chat_params_from_command(*p);
        if (!c) return void(out.fail(errc::invalid_params, c.message()));
        if (!docs_.find(c->textDocument.uri)) {
            return void(out.fail(errc::invalid_params, p->command + ": document " + c->textDocument.uri + " is not open"));
        }
        h_.on_chat(*c, ctx, typed_responder<chat_result>(out));
        return;
    }
    out.fail(errc::invalid_params, "workspace/executeCommand: unknown command '" + p->command + "'");
}

void server::dispatch_notification(notification && n) {
    if (n.method == "exit") {
        state_ = lifecycle::exited;
        channel_->close();
        cancel_all();
        logger().info("exit ({}shutdown first): exit code {}", shutdown_received_ ? "" : "without ", exit_code());
        return;
    }
    if (state_ != lifecycle::running) {
        logger().debug("notification {} dropped: server is {}", n.method,
                       state_ == lifecycle::uninitialized ? "not initialized" : "shutting down");
        return;
    }

    // Reads params of a notification; a bad one can only be reported in the client's log.
    auto read = [&]<class T>(std::type_identity<T>) -> std::optional<T> {
        auto p = parse_params<T>(n.params, n.method);
        if (!p) {
            log_to_client(message_type::error, p.message());
            return std::nullopt;
        }
        return std::move(*p);
    };
    auto report = [&](const status & s) {
        if (!s) log_to_client(message_type::warning, s.message());
        return bool(s);
    };

    if (n.method == "initialized") {
        if (h_.on_initialized) h_.on_initialized();
    } else if (n.method == "$/cancelRequest") {
        auto p = read(std::type_identity<cancel_params>{});
        if (!p) return;
        request_id id;
        if (p->id.is_string()) {
            id = request_id(std::string(p->id.get_string()));
        } else if (p->id.is_int64()) {
            id = request_id(p->id.get_int64());
        } else {
            return;   // an integer past int64: no request of ours can have it
        }
        std::optional<cancel_source> src;
        {
            std::lock_guard lock(in_flight_->mu);
            if (auto it = in_flight_->entries.find(id); it != in_flight_->entries.end()) src = it->second;
        }
        if (src) src->cancel();   // unknown or answered ids are ignored, as the spec allows
    } else if (n.method == "textDocument/didOpen") {
        auto p = read(std::type_identity<did_open_params>{});
        if (!p) return;
        report(docs_.open(*p));   // a re-open replaces the content, and is reported
        if (const document * d = docs_.find(p->textDocument.uri); d && h_.on_did_open) h_.on_did_open(*d, docs_);
    } else if (n.method == "textDocument/didChange") {
        auto p = read(std::type_identity<did_change_params>{});
        if (!p) return;
        const std::string & uri = p->textDocument.uri;
        const bool was_open = docs_.find(uri) != nullptr;
        if (report(docs_.change(*p))) {
            if (h_.on_did_change) h_.on_did_change(*docs_.find(uri));
        } else if (was_open && !docs_.find(uri) && h_.on_did_close) {
            h_.on_did_close(uri);   // grown past the size limit: the store closed it
        }
    } else if (n.method == "textDocument/didClose") {
        auto p = read(std::type_identity<did_close_params>{});
        if (p && report(docs_.close(*p)) && h_.on_did_close) h_.on_did_close(p->textDocument.uri);
    } else if (n.method == "textDocument/didSave") {
        auto p = read(std::type_identity<did_save_params>{});
        if (!p) return;
        const std::string & uri = p->textDocument.uri;
        const bool was_open = docs_.find(uri) != nullptr;
        if (report(docs_.save(*p))) {
            if (h_.on_did_save) h_.on_did_save(*docs_.find(uri));
        } else if (was_open && !docs_.find(uri) && h_.on_did_close) {
            h_.on_did_close(uri);
        }
    } else if (n.method == "textDocument/didShowCompletion") {
        auto p = read(std::type_identity<did_show_completion_params>{});
        if (p && h_.on_did_show_completion) h_.on_did_show_completion(*p);
    } else if (n.method == "textDocument/didPartiallyAcceptCompletion") {
        auto p = read(std::type_identity<did_partially_accept_completion_params>{});
        if (p && h_.on_did_partially_accept_completion) h_.on_did_partially_accept_completion(*p);
    } else if (n.method == "hearth/cursorRest") {
        auto p = read(std::type_identity<text_document_position_params>{});
        if (!p) return;
        const document * d = docs_.find(p->textDocument.uri);
        if (!d) logger().debug("hearth/cursorRest for '{}', which is not open: ignored", p->textDocument.uri);
        else if (h_.on_cursor_rest) h_.on_cursor_rest(*d, p->position, docs_);
    } else if (n.method == "hearth/didAccept") {
        auto p = read(std::type_identity<completion_feedback_params>{});
        if (p && h_.on_did_accept) h_.on_did_accept(*p);
    } else if (n.method == "hearth/didReject") {
        auto p = read(std::type_identity<completion_feedback_params>{});
        if (p && h_.on_did_reject) h_.on_did_reject(*p);
    } else {
        // Unknown notifications, and every `$/` one we do not handle, are ignored (the spec).
        logger().debug("notification {} ignored", n.method);
    }
}

}  // namespace hearth::lsp
