#include "daemon/engine/remote_model_service.h"

#include <boost/json.hpp>

#include "inference/decode/completion_rules.h"

namespace hearth::daemon {
namespace {

namespace json = boost::json;
using clock = std::chrono::steady_clock;

double ms_since(clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
}

// "http://h:8000/v1" and "http://h:8000/" both mean the server at http://h:8000.
std::string base_url(std::string url) {
    while (!url.empty() && url.back() == '/') url.pop_back();
    if (url.size() >= 3 && url.compare(url.size() - 3, 3, "/v1") == 0) url.resize(url.size() - 3);
    return url;
}

const json::value * field(const json::value & v, std::initializer_list<std::string_view> path) {
    const json::value * at = &v;
    for (const auto key : path) {
        if (at->is_array()) {
            const auto & a = at->as_array();
            if (a.empty()) return nullptr;
            at = &a.front();
        }
        if (!at->is_object()) return nullptr;
        at = at->as_object().if_contains(key);
        if (!at) return nullptr;
    }
    return at;
}

// One event of the stream: its text, whether the answer is finished, and whether it hit the
// token limit. Error events and shapes none of the APIs send are errors.
struct event_piece {
    std::string text;
    bool finished = false;
    bool max_tokens = false;
};
result<event_piece> parse_event(std::string_view data, bool chat, remote_api api) {
    boost::system::error_code ec;
    const json::value v = json::parse(data, ec);
    if (ec || !v.is_object()) return fail("an event that is not a JSON object: '", std::string(data.substr(0, 80)), "'");
    if (const auto * e = v.as_object().if_contains("error")) {
        const auto * m = field(*e, {"message"});
        return fail("the remote reported an error: ", m && m->is_string() ? std::string(m->as_string()) : json::serialize(*e));
    }
    event_piece p;
    if (chat || api == remote_api::openai) {
        const auto * choices = v.as_object().if_contains("choices");
        if (!choices || !choices->is_array()) return fail("an event without choices: '", std::string(data.substr(0, 80)), "'");
        if (choices->as_array().empty()) return p;   // a usage-only chunk
        const auto * t = chat ? field(*choices, {"delta", "content"}) : field(*choices, {"text"});
        if (t && t->is_string()) p.text = t->as_string();
        const auto * fr = field(*choices, {"finish_reason"});
        if (fr && fr->is_string()) {
            p.finished = true;
            p.max_tokens = fr->as_string() == "length";
        }
        return p;
    }
    const auto * content = v.as_object().if_contains("content");
    if (!content || !content->is_string()) return fail("an event without content: '", std::string(data.substr(0, 80)), "'");
    p.text = content->as_string();
    const auto * stop = v.as_object().if_contains("stop");
    p.finished = stop && stop->is_bool() && stop->as_bool();
    const auto * type = v.as_object().if_contains("stop_type");
    p.max_tokens = p.finished && type && type->is_string() && type->as_string() == "limit";
    return p;
}

}  // namespace

result<remote_api> parse_remote_api(std::string_view name) {
    if (name == "openai") return remote_api::openai;
    if (name == "llama-server") return remote_api::llama_server;
    return fail("remote-api '", std::string(name), "': expected openai or llama-server");
}

remote_model_service::remote_model_service(remote_options opts, prompt_text_builder build_prompt)
    : opts_(std::move(opts)), build_prompt_(std::move(build_prompt)) {
    opts_.url = base_url(opts_.url);
}

sse_outcome remote_model_service::stream(const std::string & path, const std::string & body, std::stop_token stop,
                                         clock::time_point end, bool chat,
                                         const std::function<bool(std::string_view)> & on_text, bool & finished,
                                         std::string & stream_error) {
    sse_request r;
    r.url = opts_.url + path;
    r.body = body;
    r.api_key = opts_.api_key;
    r.first_event_deadline = clock::now() + opts_.first_piece_budget;
    r.end_deadline = end;
    const remote_api api = opts_.api;
    auto out = post_sse(r, stop, [&](std::string_view data) {
        auto p = parse_event(data, chat, api);
        if (!p) {
            stream_error = p.message();
            return false;
        }
        if (!p->text.empty() && !on_text(p->text)) return false;
        if (p->finished) finished = true;
        return !p->finished;
    });
    if (!stream_error.empty()) out = {sse_failure::malformed, "the answer from " + r.url + " is not the stream expected: " + stream_error};
    return out;
}

result<completion> remote_model_service::complete(const fim_request & req, std::stop_token stop, const piece_callback & on_piece) {
    last_failure_ = sse_failure::none;   // an error before any request is no remote's fault
    if (req.n_predict < 1) return fail("n_predict ", req.n_predict, " is below 1");
    // As many as asked up to 4096 (an HTTP client's -1 is 2^31-1): the remote stops at its context.
    const int32_t n_predict = std::min(req.n_predict, 4096);
    const auto t0 = clock::now();
    json::object body;
    std::string path;
    if (!opts_.model.empty()) body["model"] = opts_.model;
    body["stream"] = true;
    body["temperature"] = 0.0;
    if (opts_.api == remote_api::openai) {
        if (!build_prompt_) return fail("remote-api = openai writes the FIM prompt with the local model's tokens, and no local model is loaded");
        auto p = build_prompt_(req);
        if (!p) return p.error();
        path = "/v1/completions";
        body["prompt"] = p->prompt;
        body["max_tokens"] = n_predict;
        json::array stop_texts;
        for (const auto & s : p->stop) if (stop_texts.size() < 4) stop_texts.emplace_back(s);   // OpenAI takes up to 4
        if (!stop_texts.empty()) body["stop"] = std::move(stop_texts);
    } else {
        path = "/infill";
        // The extra context goes first in the server's prompt: the stable part its cache keeps.
        json::array extra;
        for (const auto & c : req.extra_context) extra.push_back(json::object{{"filename", c.uri}, {"text", c.text}});
        body["input_extra"] = std::move(extra);
        body["input_prefix"] = req.prefix;
        body["input_suffix"] = req.suffix;
        body["prompt"] = "";
        body["n_predict"] = n_predict;
        body["cache_prompt"] = true;
        body["t_max_predict_ms"] = req.time_cap.count();
    }
    const auto mode = req.mode == completion_mode::multi_line ? inference::line_mode::multi_line : inference::line_mode::single_line;
    const auto rule = inference::make_completion_rule(mode, req.prefix, req.suffix);
    std::string text;
    stop_reason why = stop_reason::end_of_generation;
    int32_t n_pieces = 0;
    bool finished = false, ruled = false;
    std::string stream_error;
    auto out = stream(path, json::serialize(body), stop, t0 + opts_.first_piece_budget + req.time_cap, /*chat=*/false,
                      [&](std::string_view piece) {
                          ++n_pieces;
                          const size_t before = text.size();
                          text += piece;
                          const size_t keep = rule(text);
                          if (keep != std::string::npos) {
                              text.resize(std::min(keep, text.size()));
                              ruled = true;
                          }
                          if (on_piece && text.size() > before) on_piece(std::string_view(text).substr(before));
                          return !ruled;
                      },
                      finished, stream_error);
    last_failure_ = out.failure;
    if (out.failure == sse_failure::cancelled) why = stop_reason::cancelled;
    else if (out.failure != sse_failure::none) return fail(out.message);
    else if (ruled) why = stop_reason::stop_rule;
    else if (out.timed_out) {
        // As the local cap does: finished lines stay, an unfinished last line goes.
        why = stop_reason::time_cap;
        if (const auto nl = text.rfind('\n'); nl != std::string::npos) text.resize(nl + 1);
    } else if (!finished) {
        last_failure_ = sse_failure::dropped;
        return fail("the stream from ", opts_.url, path, " ended before the answer did");
    }
    completion c;
    if (!text.empty()) c.candidates.push_back({text, 0.0, why});
    c.timings.n_generated = n_pieces;
    c.timings.t_generate_ms = ms_since(t0);
    std::lock_guard lock(mu_);
    last_ = c.timings;
    return c;
}

result<chat_answer> remote_model_service::chat(const chat_request & req, std::stop_token stop, const piece_callback & on_piece) {
    last_failure_ = sse_failure::none;
    const auto t0 = clock::now();
    json::array messages;
    for (const auto & m : req.messages) messages.push_back(json::object{{"role", m.role}, {"content", m.content}});
    // An HTTP client's -1 is 2^31-1: the remote stops at its context, a remote that checks the
    // count against it still gets a count it accepts.
    json::object body{{"messages", std::move(messages)}, {"max_tokens", std::min(req.n_predict, 65536)}, {"temperature", req.temperature},
                      {"stream", true}};
    if (!opts_.model.empty()) body["model"] = opts_.model;
    chat_answer a;
    int32_t n_pieces = 0;
    bool finished = false;
    std::string stream_error;
    auto out = stream("/v1/chat/completions", json::serialize(body), stop, t0 + req.time_budget, /*chat=*/true,
                      [&](std::string_view piece) {
                          ++n_pieces;
                          a.text += piece;
                          if (on_piece) on_piece(piece);
                          return true;
                      },
                      finished, stream_error);
    last_failure_ = out.failure;
    if (out.failure == sse_failure::cancelled) a.stop = stop_reason::cancelled;
    else if (out.failure != sse_failure::none) return fail(out.message);
    else if (out.timed_out) a.stop = stop_reason::time_budget;
    else if (!finished) {
        last_failure_ = sse_failure::dropped;
        return fail("the stream from ", opts_.url, "/v1/chat/completions ended before the answer did");
    }
    a.timings.n_generated = n_pieces;
    a.timings.t_generate_ms = ms_since(t0);
    std::lock_guard lock(mu_);
    last_ = a.timings;
    return a;
}

model_status remote_model_service::status() const {
    model_status s;
    s.loaded = true;
    s.model_name = opts_.model.empty() ? opts_.url : opts_.model;
    s.engine.kind = "remote";
    s.engine.remote_url = opts_.url;
    s.engine.remote_api = opts_.api == remote_api::openai ? "openai" : "llama-server";
    std::lock_guard lock(mu_);
    s.last = last_;
    return s;
}

result<std::vector<int32_t>> remote_model_service::tokenize(std::string_view, bool, bool) const {
    return fail("the remote engine does not tokenize here (no local model is loaded)");
}

result<std::string> remote_model_service::detokenize(std::span<const int32_t>) const {
    return fail("the remote engine does not detokenize here (no local model is loaded)");
}

}  // namespace hearth::daemon
