// /v1/chat/completions: OpenAI's chat, answered by model_service::chat (the model's own chat
// template), streamed piece by piece as chat.completion.chunk events when asked.
#include <ctime>

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <spdlog/spdlog.h>

#include "daemon/http/http_api.h"
#include "daemon/http/http_fields.h"

namespace hearth::daemon {

namespace json = boost::json;

namespace {

// A message's content: a string, or an array of parts of which the {"type": "text"} ones count.
result<std::string> message_content(const json::value & v, size_t i) {
    if (v.is_null()) return std::string();
    if (v.is_string()) return std::string(v.get_string());
    if (!v.is_array()) return fail("messages[", i, "].content: expected a string or an array of parts");
    std::string out;
    for (const auto & part : v.get_array()) {
        if (!part.is_object()) return fail("messages[", i, "].content: expected parts {type, text}");
        const auto & po = part.get_object();
        const auto * type = po.if_contains("type");
        if (!type || !type->is_string()) return fail("messages[", i, "].content: a part lacks its type");
        if (type->get_string() != "text") return fail("messages[", i, "].content: only text parts are supported, got ", type->get_string());
        auto t = http_fields::text(po, "text");
        if (!t) return fail("messages[", i, "].content.", t.message());
        out += *t;
    }
    return out;
}

result<std::vector<chat_message>> chat_messages(const json::object & o) {
    const auto * v = o.if_contains("messages");
    if (!v || !v->is_array() || v->get_array().empty()) return fail("messages: expected a non-empty array of {role, content}");
    std::vector<chat_message> out;
    const auto & a = v->get_array();
    for (size_t i = 0; i < a.size(); ++i) {
        if (!a[i].is_object()) return fail("messages[", i, "]: expected an object {role, content}");
        const auto & m = a[i].get_object();
        auto role = http_fields::text(m, "role");
        if (!role) return fail("messages[", i, "].", role.message());
        if (*role == "developer") *role = "system";
        if (*role != "system" && *role != "user" && *role != "assistant")
            return fail("messages[", i, "].role: expected system, user or assistant, got '", *role, "'");
        const auto * c = m.if_contains("content");
        auto content = message_content(c ? *c : json::value(), i);
        if (!content) return content.error();
        out.push_back({*role, *content});
    }
    return out;
}

}  // namespace

void http_api::chat(const http_request & hr, const json::object & o, reply_ptr out) {
    chat_request req;
    auto messages = chat_messages(o);
    if (!messages) return out->respond(error_response(400, messages.message()));
    req.messages = std::move(*messages);
    // llama-server's n_predict wins over OpenAI's max_completion_tokens / max_tokens, as there.
    // 0 (llama.vim's instruct warm-up): the conversation goes into the cache, no answer; -1 or
    // any count: until the context ends at most.
    const char * n_name = o.contains("n_predict") ? "n_predict" : o.contains("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
    auto n = http_fields::integer(o, n_name, cfg_.chat.max_tokens, -1, INT32_MAX);
    auto fields = http_fields::shared(o);
    auto stream = http_fields::boolean(o, "stream", false);
    auto count = http_fields::integer(o, "n", 1, 1, 1);
    for (const std::string * e : {n ? nullptr : &n.message(), fields ? nullptr : &fields.message(),
                                  stream ? nullptr : &stream.message(), count ? nullptr : &count.message()})
        if (e) return out->respond(error_response(400, *e));
    const bool warm_up = *n == 0;
    req.n_predict = *n < 0 ? INT32_MAX : warm_up ? 1 : static_cast<int32_t>(std::min<int64_t>(*n, INT32_MAX));
    req.temperature = static_cast<float>(fields->temperature);
    req.seed = static_cast<uint64_t>(fields->seed);
    req.time_budget = std::chrono::milliseconds(cfg_.chat.time_budget_ms);
    const std::string id = "chatcmpl-" + std::to_string(next_id_++);
    const bool streaming = *stream;

    job j;
    j.priority = job_priority::chat;
    j.owner = hr.owner;
    j.dropped = [out](drop_reason r) {
        out->respond(error_response(503, r == drop_reason::shutdown ? "the daemon is shutting down" : "cancelled"));
    };
    j.run = [this, out, req = std::move(req), id, streaming, warm_up](std::stop_token stop) {
        const std::string model = model_name();
        const auto created = std::time(nullptr);
        auto chunk = [&](json::object delta, const json::value & finish) {
            return json_text(json::object{{"id", id}, {"object", "chat.completion.chunk"}, {"created", created}, {"model", model},
                                                {"choices", json::array{json::object{{"index", 0}, {"delta", std::move(delta)},
                                                                                     {"finish_reason", finish}}}}});
        };
        std::stop_source gone;   // the client left mid-stream: stop generating for it
        std::stop_callback forward(stop, [&gone] { gone.request_stop(); });
        if (streaming) {
            out->begin_events();
            out->event(chunk({{"role", "assistant"}, {"content", ""}}, nullptr));
        }
        ++processing_;
        auto r = model_->chat(req, gone.get_token(), [&](std::string_view piece) {
            if (!warm_up && streaming && !out->event(chunk({{"content", piece}}, nullptr))) gone.request_stop();
        });
        if (r && warm_up) r->text.clear();
        --processing_;
        if (!r) {
            slot_done("", nullptr);
            spdlog::warn("http chat: {}", r.message());
            if (streaming) {
                out->event(json_text(json::object{{"error", json::object{{"message", "chat failed: " + r.message()}}}}));
                return out->end_events();
            }
            return out->respond(error_response(500, "chat failed: " + r.message()));
        }
        slot_done("", &r->timings);
        const auto & t = r->timings;
        const char * finish = r->stop == stop_reason::max_tokens ? "length" : "stop";
        const json::object usage{{"prompt_tokens", t.n_prompt_tokens}, {"completion_tokens", t.n_generated},
                                 {"total_tokens", t.n_prompt_tokens + t.n_generated}};
        if (streaming) {
            std::string last = chunk({}, json::string(finish));
            json::value v = json::parse(last);
            v.as_object()["usage"] = usage;
            v.as_object()["timings"] = timings_json(t);
            out->event(json_text(v));
            out->event("[DONE]");
            return out->end_events();
        }
        json::object b{{"id", id}, {"object", "chat.completion"}, {"created", created}, {"model", model},
                       {"choices", json::array{json::object{{"index", 0},
                                                            {"message", json::object{{"role", "assistant"}, {"content", r->text}}},
                                                            {"finish_reason", finish}}}},
                       {"usage", usage}, {"timings", timings_json(t)}};
        out->respond({200, "application/json", json_text(b)});
    };
    submit(std::move(j), out);
}

}  // namespace hearth::daemon
