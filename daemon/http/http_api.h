// http_api: the HTTP endpoints existing clients speak (docs/http.md), over the daemon's own
// scheduler, model and completion pipeline, so an HTTP client gets what an LSP one gets:
// the per-file KV slots, extra context, the suggestion memory, budgets and cleanup.
//   llama-server: /infill /completion /tokenize /detokenize /health /props /slots /metrics
//   OpenAI:       /v1/completions (suffix: FIM) /v1/chat/completions /v1/models
// FIM requests (http_fim.cpp) build a completion_ask and run completion_pipeline::run on the
// compute worker; chat (http_chat.cpp) runs model_service::chat with the model's template.
// The KV slot of a FIM request is its file: `filename`, else `id_slot`, else one shared
// "untitled" key; a newer /infill for the same file supersedes the older one.
// The transport (http_server.h) has checked the request's header (http_request_parser.h) before
// handle(); handle() routes by the same table (route_refusal).
// Thread-safety: handle() from any I/O thread; jobs run on the worker; the slot table locks.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "daemon/engine/model_service.h"
#include "daemon/http/http_guard.h"
#include "daemon/pipeline/completion_pipeline.h"
#include "daemon/services/scheduler.h"
#include "daemon/settings/config.h"

namespace hearth::daemon {

struct http_request {
    std::string method;   // "GET", "POST"
    std::string path;     // the target without its query
    std::string body;
    uint64_t owner = 0;   // the connection, for cancelling its jobs when it goes
};

struct http_response {
    unsigned status = 200;
    std::string content_type = "application/json";
    std::string body;
};

// Where one request's answer goes: respond() once, or begin_events(), event()..., end_events()
// (Server-Sent Events). May be called from the compute worker; the transport posts the bytes.
class http_reply {
public:
    virtual ~http_reply() = default;
    virtual void respond(http_response r) = 0;
    virtual void begin_events() = 0;
    virtual bool event(std::string data) = 0;   // one "data: ..." event; false: the client is gone
    virtual void end_events() = 0;
};
using reply_ptr = std::shared_ptr<http_reply>;

// Every body and event the API sends: v serialized, any byte that is not UTF-8 made U+FFFD.
std::string json_text(const boost::json::value & v);

// {"error": {"code", "message", "type"}}: the shape both llama-server and OpenAI clients read.
http_response error_response(unsigned status, std::string_view message);

// 404 for a path no endpoint has, 405 for a method its endpoint does not take: decided from the
// header alone, so the transport refuses before reading a body (http_request_parser.h).
std::optional<http_refusal> route_refusal(std::string_view method, std::string_view path);

class http_api {
public:
    http_api(std::shared_ptr<scheduler> sched, model_service * model, completion_pipeline * pipeline, const daemon_config & cfg);

    void handle(const http_request & req, reply_ptr out);
    // The connection is gone: its queued or running jobs stop.
    void connection_closed(uint64_t owner) { sched_->cancel_owner(owner); }

private:
    // One per file key a FIM request named (GET /slots).
    struct slot_entry {
        int id = 0;
        std::string key;
        uint64_t n_requests = 0;
        bool is_processing = false;
        generation_timings last;
    };
    struct fim_call;

    void fim(const http_request & req, const boost::json::object & body, reply_ptr out);   // http_fim.cpp
    void run_fim(const fim_call & call, std::stop_token stop, const reply_ptr & out);
    void chat(const http_request & req, const boost::json::object & body, reply_ptr out);  // http_chat.cpp
    void submit(job j, const reply_ptr & out);

    http_response health() const;
    http_response props() const;
    http_response slots() const;
    http_response metrics() const;
    http_response models() const;
    http_response tokenize(const boost::json::object & body) const;
    http_response detokenize(const boost::json::object & body) const;

    std::string model_name() const;
    slot_entry & slot_for(const std::string & key);   // slots_mu_ held
    void slot_done(const std::string & key, const generation_timings * t);

    std::shared_ptr<scheduler> sched_;
    model_service * model_;
    completion_pipeline * pipeline_;
    daemon_config cfg_;
    std::atomic<uint64_t> next_id_{1};
    std::atomic<uint64_t> n_requests_{0}, n_prompt_tokens_{0}, n_predicted_tokens_{0};
    std::atomic<double> t_prompt_ms_{0}, t_predicted_ms_{0};
    std::atomic<int> processing_{0};
    mutable std::mutex slots_mu_;
    std::map<std::string, slot_entry> slots_;
};

// The JSON of the model's timings as llama-server names them (prompt_n, predicted_per_second...).
boost::json::object timings_json(const generation_timings & t);

}  // namespace hearth::daemon
