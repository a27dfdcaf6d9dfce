#include "daemon/http/http_api.h"

#include <algorithm>
#include <span>

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include "daemon/http/http_fields.h"
#include "lsp/utf8.h"

#ifndef HEARTH_VERSION
#define HEARTH_VERSION "0.1.0"
#endif

namespace hearth::daemon {

namespace json = boost::json;

namespace {

http_response json_response(const json::value & v, unsigned status = 200) { return {status, "application/json", json_text(v)}; }

const char * k_no_model = "no model is loaded: start the daemon with --model PATH (or `model = ...` in config.toml)";

}  // namespace

// Boost.JSON writes a string's bytes as they are; a header or a path echoed into a message, or
// a model's text, may hold bytes that are not UTF-8, and JSON must be.
std::string json_text(const json::value & v) {
    std::string text = json::serialize(v);
    if (!lsp::is_valid_utf8(text)) text = lsp::to_valid_utf8(text);
    return text;
}

http_response error_response(unsigned status, std::string_view message) {
    const char * type = status == 401 ? "authentication_error" : status >= 500 ? "server_error" : "invalid_request_error";
    return json_response(json::object{{"error", json::object{{"code", status}, {"message", message}, {"type", type}}}}, status);
}

json::object timings_json(const generation_timings & t) {
    const int32_t prompt_n = t.n_prompt_tokens - t.n_cached_tokens;
    auto per = [](double ms, int32_t n) { return n > 0 ? ms / n : 0.0; };
    auto rate = [](double ms, int32_t n) { return ms > 0 ? 1000.0 * n / ms : 0.0; };
    return {{"cache_n", t.n_cached_tokens},
            {"prompt_n", prompt_n},
            {"prompt_ms", t.t_prompt_ms},
            {"prompt_per_token_ms", per(t.t_prompt_ms, prompt_n)},
            {"prompt_per_second", rate(t.t_prompt_ms, prompt_n)},
            {"predicted_n", t.n_generated},
            {"predicted_ms", t.t_generate_ms},
            {"predicted_per_token_ms", per(t.t_generate_ms, t.n_generated)},
            {"predicted_per_second", rate(t.t_generate_ms, t.n_generated)},
            // hearth's: what was left out to fit (other files' chunks) and the speculation's guesses
            {"extra_dropped", t.n_extra_dropped},
            {"draft_n", t.n_drafted},
            {"draft_n_accepted", t.n_draft_accepted}};
}

http_api::http_api(std::shared_ptr<scheduler> sched, model_service * model, completion_pipeline * pipeline, const daemon_config & cfg)
    : sched_(std::move(sched)), model_(model), pipeline_(pipeline), cfg_(cfg) {}

namespace {

constexpr std::string_view k_get_paths[] = {"/health", "/v1/health", "/v1/models", "/models", "/props", "/slots", "/metrics"};
constexpr std::string_view k_post_paths[] = {"/infill", "/completion", "/completions", "/v1/completions",
                                             "/chat/completions", "/v1/chat/completions", "/tokenize", "/detokenize"};

bool listed(std::span<const std::string_view> paths, std::string_view p) { return std::find(paths.begin(), paths.end(), p) != paths.end(); }

}  // namespace

std::optional<http_refusal> route_refusal(std::string_view method, std::string_view path) {
    const char * want = listed(k_get_paths, path) ? "GET" : listed(k_post_paths, path) ? "POST" : nullptr;
    if (!want) return http_refusal{404, fmt::format("no endpoint {} (docs/http.md lists them)", path)};
    if (method != want) return http_refusal{405, fmt::format("{} {}: expected {}", method, path, want)};
    return std::nullopt;
}

void http_api::handle(const http_request & req, reply_ptr out) {
    if (auto no = route_refusal(req.method, req.path)) return out->respond(error_response(no->status, no->message));
    const std::string & p = req.path;
    if (p == "/health" || p == "/v1/health") return out->respond(health());
    if (p == "/v1/models" || p == "/models") return out->respond(models());
    if (p == "/props") return out->respond(props());
    if (p == "/slots") return out->respond(slots());
    if (p == "/metrics") return out->respond(metrics());
    boost::system::error_code ec;
    json::value body = json::parse(req.body, ec);
    if (ec) return out->respond(error_response(400, "the body is not JSON: " + ec.message()));
    if (!body.is_object()) return out->respond(error_response(400, "the body must be a JSON object"));
    const json::object & o = body.get_object();
    if (!model_) return out->respond(error_response(503, k_no_model));
    if (p == "/tokenize") return out->respond(tokenize(o));
    if (p == "/detokenize") return out->respond(detokenize(o));
    if (p == "/chat/completions" || p == "/v1/chat/completions") return chat(req, o, std::move(out));
    fim(req, o, std::move(out));
}

void http_api::submit(job j, const reply_ptr & out) {
    auto id = sched_->submit(std::move(j));
    if (!id) out->respond(error_response(503, "server busy: " + id.message()));
}

std::string http_api::model_name() const { return model_ ? model_->status().model_name : std::string(); }

http_response http_api::health() const {
    if (!model_) return json_response(json::object{{"status", "error"}, {"error", k_no_model}}, 503);
    return json_response(json::object{{"status", "ok"}});
}

http_response http_api::models() const {
    json::array data;
    if (model_) {
        const model_status m = model_->status();
        data.push_back(json::object{{"id", m.model_name}, {"object", "model"}, {"created", 0}, {"owned_by", "hearth"},
                                    {"meta", json::object{{"n_ctx_train", m.n_ctx}, {"n_params", m.n_params}, {"size", m.mapped_bytes}}}});
    }
    return json_response(json::object{{"object", "list"}, {"data", std::move(data)}});
}

http_response http_api::props() const {
    const model_status m = model_ ? model_->status() : model_status{};
    std::lock_guard lock(slots_mu_);
    return json_response(json::object{
        {"default_generation_settings", json::object{{"n_ctx", m.n_ctx}, {"n_predict", pipeline_->settings().max_tokens}}},
        {"total_slots", std::max<int64_t>(m.n_slots_max, static_cast<int64_t>(slots_.size()))},
        {"model_path", m.model_path},
        {"model_alias", m.model_name},
        {"build_info", "hearth " HEARTH_VERSION}});
}

http_response http_api::slots() const {
    const model_status m = model_ ? model_->status() : model_status{};
    json::array a;
    std::lock_guard lock(slots_mu_);
    for (const auto & [key, s] : slots_)
        a.push_back(json::object{{"id", s.id}, {"filename", key}, {"n_ctx", m.n_ctx}, {"is_processing", s.is_processing},
                                 {"n_requests", s.n_requests}, {"tokens_cached", s.last.n_cached_tokens},
                                 {"timings", timings_json(s.last)}});
    return json_response(a);
}

http_response http_api::metrics() const {
    const model_status m = model_ ? model_->status() : model_status{};
    const auto st = sched_->stats();
    std::string out;
    auto metric = [&out](const char * name, const char * type, const char * help, double v) {
        out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0} {3}\n", name, help, type, v);
    };
    metric("hearth_http_requests_total", "counter", "Model requests served over HTTP.", static_cast<double>(n_requests_.load()));
    metric("hearth_prompt_tokens_total", "counter", "Prompt tokens evaluated (not taken from the KV cache), all transports.",
           static_cast<double>(m.tokens_evaluated));
    metric("hearth_prompt_tokens_cached_total", "counter", "Prompt tokens reused from the KV cache, all transports.",
           static_cast<double>(m.tokens_reused));
    metric("hearth_http_prompt_tokens_total", "counter", "Prompt tokens evaluated for HTTP requests.",
           static_cast<double>(n_prompt_tokens_.load()));
    metric("hearth_http_predicted_tokens_total", "counter", "Tokens generated for HTTP requests.",
           static_cast<double>(n_predicted_tokens_.load()));
    metric("hearth_http_prompt_seconds_total", "counter", "Time evaluating prompts of HTTP requests.", t_prompt_ms_.load() / 1000.0);
    metric("hearth_http_predicted_seconds_total", "counter", "Time generating for HTTP requests.", t_predicted_ms_.load() / 1000.0);
    metric("hearth_prompt_tokens_seconds", "gauge", "Prompt tokens per second of the last model call.", m.prompt_tokens_per_s);
    metric("hearth_predicted_tokens_seconds", "gauge", "Generated tokens per second of the last model call.", m.generate_tokens_per_s);
    metric("hearth_kv_cache_usage_ratio", "gauge", "KV cache bytes used over the budget.",
           m.kv_budget_bytes ? static_cast<double>(m.kv_used_bytes) / static_cast<double>(m.kv_budget_bytes) : 0.0);
    metric("hearth_kv_cache_tokens", "gauge", "Positions held in every KV slot.", static_cast<double>(m.tokens_held));
    metric("hearth_kv_slots", "gauge", "KV slots that exist.", m.n_slots);
    metric("hearth_kv_slots_max", "gauge", "KV slots that fit the budget at full context.", m.n_slots_max);
    metric("hearth_requests_processing", "gauge", "HTTP model requests running now.", processing_.load());
    metric("hearth_requests_deferred", "gauge", "Model jobs waiting in the queue, all transports.", static_cast<double>(st.queued));
    return {200, "text/plain; version=0.0.4", std::move(out)};
}

http_response http_api::tokenize(const json::object & o) const {
    auto content = http_fields::text(o, "content");
    auto add_special = http_fields::boolean(o, "add_special", false);
    auto parse_special = http_fields::boolean(o, "parse_special", true);
    auto with_pieces = http_fields::boolean(o, "with_pieces", false);
    if (!content) return error_response(400, content.message());
    if (!add_special) return error_response(400, add_special.message());
    if (!parse_special) return error_response(400, parse_special.message());
    if (!with_pieces) return error_response(400, with_pieces.message());
    auto ids = model_->tokenize(*content, *add_special, *parse_special);
    if (!ids) return error_response(400, ids.message());
    json::array tokens;
    for (int32_t id : *ids) {
        if (!*with_pieces) {
            tokens.push_back(id);
            continue;
        }
        const int32_t one[] = {id};
        auto piece = model_->detokenize(one);
        tokens.push_back(json::object{{"id", id}, {"piece", piece ? *piece : std::string()}});
    }
    return json_response(json::object{{"tokens", std::move(tokens)}});
}

http_response http_api::detokenize(const json::object & o) const {
    const auto * t = o.if_contains("tokens");
    if (!t || !t->is_array()) return error_response(400, "tokens: expected an array of token ids");
    std::vector<int32_t> ids;
    for (size_t i = 0; i < t->get_array().size(); ++i) {
        const json::value & v = t->get_array()[i];
        if (!v.is_int64() || v.get_int64() < INT32_MIN || v.get_int64() > INT32_MAX)
            return error_response(400, fmt::format("tokens[{}]: expected a token id", i));
        ids.push_back(static_cast<int32_t>(v.get_int64()));
    }
    auto text = model_->detokenize(ids);
    if (!text) return error_response(400, text.message());
    return json_response(json::object{{"content", *text}});
}

http_api::slot_entry & http_api::slot_for(const std::string & key) {
    auto it = slots_.find(key);
    if (it == slots_.end()) {
        slot_entry e;
        e.id = static_cast<int>(slots_.size());
        e.key = key;
        it = slots_.emplace(key, std::move(e)).first;
    }
    return it->second;
}

void http_api::slot_done(const std::string & key, const generation_timings * t) {
    if (t) {
        ++n_requests_;
        n_prompt_tokens_ += static_cast<uint64_t>(std::max(0, t->n_prompt_tokens - t->n_cached_tokens));
        n_predicted_tokens_ += static_cast<uint64_t>(std::max(0, t->n_generated));
        t_prompt_ms_ = t_prompt_ms_.load() + t->t_prompt_ms;      // the worker is the only writer
        t_predicted_ms_ = t_predicted_ms_.load() + t->t_generate_ms;
    }
    if (key.empty()) return;   // chat: counted, no slot
    std::lock_guard lock(slots_mu_);
    slot_entry & s = slot_for(key);
    s.is_processing = false;
    if (t) s.last = *t;
}

}  // namespace hearth::daemon
