// The FIM endpoints: llama-server's /infill and /completion, OpenAI's /v1/completions. Each
// becomes a completion_ask for the daemon's one completion pipeline (the same object the LSP
// service uses), run as a job on the compute worker.
#include <chrono>

#include <boost/json/array.hpp>
#include <spdlog/spdlog.h>

#include "daemon/http/http_api.h"
#include "daemon/http/http_fields.h"

namespace hearth::daemon {

namespace json = boost::json;

struct http_api::fim_call {
    enum class kind { infill, completion, openai } what = kind::infill;
    completion_ask ask;
    fim_request req;
    bool stream = false;
    std::vector<std::string> stop_words;   // `stop`
    std::string id;                        // OpenAI response id
    bool warm_up = false;                  // n_predict 0: fill the slot, answer no text
    int64_t n_indent = 0;                  // llama.vim's: lines less indented than this end the answer
    std::vector<std::string> response_fields;   // llama-server's: the answer's keys to send
};

namespace {

using clock_type = std::chrono::steady_clock;

// Tokens of other files' chunks, beyond the window, that a request over HTTP evaluates when its
// slot lacks them (fim_request::max_cold_extra_tokens).
constexpr int32_t k_max_cold_extra_tokens = 256;

// llama-server's stop_type names.
const char * stop_type(stop_reason r) {
    switch (r) {
        case stop_reason::end_of_generation: return "eos";
        case stop_reason::stop_rule: return "word";
        case stop_reason::cancelled: return "none";
        default: return "limit";
    }
}

// n_indent as llama-server applies it: from the second line on, a line indented less than
// n_indent (a character after fewer spaces or tabs) ends the answer before that character.
bool cut_at_indent(std::string & text, int64_t n_indent) {
    if (n_indent <= 0) return false;
    for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', nl + 1)) {
        size_t at = nl + 1;
        while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
        if (at < text.size() && static_cast<int64_t>(at - nl - 1) < n_indent) {
            text.erase(at);
            return true;
        }
    }
    return false;
}

// The text up to the first stop word (`stop`); whether one was found.
bool cut_at_stop_word(std::string & text, const std::vector<std::string> & words) {
    size_t cut = std::string::npos;
    for (const auto & w : words)
        if (!w.empty()) cut = std::min(cut, text.find(w));
    if (cut == std::string::npos) return false;
    text.erase(cut);
    return true;
}

result<std::vector<std::string>> stop_words(const json::object & o) {
    std::vector<std::string> out;
    const auto * v = o.if_contains("stop");
    if (!v || v->is_null()) return out;
    if (v->is_string()) {
        out.emplace_back(v->get_string());
        return out;
    }
    if (!v->is_array()) return fail("stop: expected a string or an array of strings");
    for (const auto & w : v->get_array()) {
        if (!w.is_string()) return fail("stop: expected a string or an array of strings");
        out.emplace_back(w.get_string());
    }
    return out;
}

// input_extra: [{"filename", "text"}] chunks of other files (llama.vscode's and llama.vim's
// ring of recently seen code), placed before the window as the LSP path's extra context is.
result<std::vector<context_chunk>> extra_chunks(const json::object & o) {
    std::vector<context_chunk> out;
    const auto * v = o.if_contains("input_extra");
    if (!v || v->is_null()) return out;
    if (!v->is_array()) return fail("input_extra: expected an array of {filename, text}");
    const auto & a = v->get_array();
    for (size_t i = 0; i < a.size(); ++i) {
        if (!a[i].is_object()) return fail("input_extra[", i, "]: expected an object {filename, text}");
        auto name = http_fields::text(a[i].get_object(), "filename");
        auto text = http_fields::text(a[i].get_object(), "text");
        if (!name) return fail("input_extra[", i, "].", name.message());
        if (!text) return fail("input_extra[", i, "].", text.message());
        if (!text->empty()) out.push_back({*name, *text});
    }
    return out;
}

// Where a warm-up's job answers: nowhere, its client has had its answer.
class unread_reply final : public http_reply {
public:
    void respond(http_response) override {}
    void begin_events() override {}
    bool event(std::string) override { return true; }
    void end_events() override {}
};

// llama-server's answer to /infill and /completion, one candidate's. generation_settings:
// llama.vscode reads the object (its status line throws without it); n_ctx is the slot's context.
struct native_answer {
    size_t index = 0;
    std::string_view content;
    const char * stop_type = "eos";
    bool truncated = false;
    int64_t id_slot = 0;
};

json::object native_object(const native_answer & a, const generation_timings & t, const std::string & model,
                           const fim_request & req, int32_t n_ctx) {
    return {{"index", a.index},
            {"content", a.content},
            {"id_slot", a.id_slot},
            {"stop", true},
            {"model", model},
            {"tokens_predicted", t.n_generated},
            {"tokens_evaluated", t.n_prompt_tokens},
            {"tokens_cached", t.n_cached_tokens},
            {"truncated", a.truncated},
            {"stop_type", a.stop_type},
            {"stopping_word", ""},
            {"has_new_line", a.content.find('\n') != std::string_view::npos},
            {"generation_settings", json::object{{"n_ctx", n_ctx}, {"n_predict", req.n_predict}, {"n_cmpl", req.n_candidates}}},
            {"timings", timings_json(t)}};
}

// An answer made without the model (typed-ahead memory, a warm-up's at-once reply): as one
// body, or as the one event of a stream.
void send_now(http_reply & out, bool stream, const json::object & answer) {
    if (!stream) return out.respond({200, "application/json", json_text(answer)});
    out.begin_events();
    out.event(json_text(answer));
    out.end_events();
}

// OpenAI's prompt: a string, or an array holding one string.
result<std::string> openai_prompt(const json::object & o) {
    const auto * v = o.if_contains("prompt");
    if (!v || v->is_null()) return std::string();
    if (v->is_string()) return std::string(v->get_string());
    if (v->is_array() && v->get_array().size() == 1 && v->get_array()[0].is_string())
        return std::string(v->get_array()[0].get_string());
    return fail("prompt: expected a string (or an array of one string)");
}

}  // namespace

void http_api::fim(const http_request & hr, const json::object & o, reply_ptr out) {
    fim_call c;
    c.what = hr.path == "/infill" ? fim_call::kind::infill
             : hr.path == "/completion" ? fim_call::kind::completion : fim_call::kind::openai;
    const bool openai = c.what == fim_call::kind::openai;
    const completion_settings & cs = pipeline_->settings();
    std::string prefix, suffix;
    int64_t n_predict = 0, t_predict = -1, t_prompt = -1, n_cmpl = 1;
    http_fields::shared_fields shared;
    std::string filename;
    bool ok = true;
    std::string why;
    auto take = [&](auto r, auto & into) {
        if (!ok) return;
        if (!r) {
            ok = false;
            why = r.message();
        } else {
            into = *r;
        }
    };
    if (c.what == fim_call::kind::infill) {
        std::string head, prompt;
        take(http_fields::text(o, "input_prefix"), head);
        take(http_fields::text(o, "prompt"), prompt);   // the cursor line's text before the cursor
        take(http_fields::text(o, "input_suffix"), suffix);
        prefix = head + prompt;
    } else if (c.what == fim_call::kind::completion) {
        take(http_fields::text(o, "prompt"), prefix);
    } else {
        take(openai_prompt(o), prefix);
        take(http_fields::text(o, "suffix"), suffix);
        take(http_fields::integer(o, "n", 1, 1, 8), n_cmpl);
        bool echo = false;
        take(http_fields::boolean(o, "echo", false), echo);
        if (ok && echo) ok = false, why = "echo: true is not supported";
    }
    take(stop_words(o), c.stop_words);
    if (!openai) {
        take(http_fields::integer(o, "n_cmpl", 1, 1, 8), n_cmpl);
        take(http_fields::integer(o, "n_indent", 0, 0, INT32_MAX), c.n_indent);
        take(http_fields::response_fields(o), c.response_fields);
    }
    // OpenAI's max_tokens, else llama-server's n_predict (which wins where both are given, as there).
    const int64_t default_n = openai ? 16 : cs.max_tokens;
    take(http_fields::integer(o, openai && !o.contains("n_predict") ? "max_tokens" : "n_predict", default_n, -1, INT32_MAX),
         n_predict);
    // -1: until the context ends (or an end token, a stop word, the budgets); any count stops at
    // the context's end, as llama-server's does. 0 (llama.vim's and llama.vscode's warm-up):
    // the prompt is evaluated into the slot and one token generated, its text not returned.
    const bool warm_up = n_predict == 0;
    if (n_predict < 0) n_predict = INT32_MAX;
    if (warm_up) n_predict = 1;
    take(http_fields::shared(o), shared);
    take(http_fields::integer(o, "t_max_predict_ms", -1, -1, 600000), t_predict);
    // llama-server accepts t_max_prompt_ms and does not implement it; the clients send it (1 ms
    // on llama.vim's warm-up). Checked, no effect: the daemon's own prompt budget applies.
    take(http_fields::integer(o, "t_max_prompt_ms", -1, -1, 600000), t_prompt);
    take(http_fields::text(o, "filename"), filename);
    take(http_fields::boolean(o, "stream", false), c.stream);
    std::vector<context_chunk> extra;
    take(extra_chunks(o), extra);
    if (!ok) return out->respond(error_response(400, why));
    const int64_t id_slot = shared.id_slot;

    // The KV slot is the file's: named, else the client's slot number, else one shared key.
    const std::string uri = !filename.empty() ? filename : id_slot >= 0 ? "slot-" + std::to_string(id_slot) : "untitled";
    c.ask.key = "http\n" + uri;
    c.ask.uri = uri;
    c.ask.text = prefix + suffix;
    c.ask.cursor = prefix.size();
    c.ask.extra = std::move(extra);
    c.req = pipeline_->request_for(c.ask);
    c.req.n_predict = static_cast<int32_t>(n_predict);
    c.req.n_candidates = static_cast<int32_t>(n_cmpl);
    if (c.what != fim_call::kind::infill) {
        // A prompt to continue, not ghost text at a cursor: no single-line rule, the chat's time.
        c.req.mode = completion_mode::multi_line;
        c.req.time_budget = c.req.time_cap = std::chrono::milliseconds(cfg_.chat.time_budget_ms);
    }
    if (t_predict > 0) {
        c.req.time_budget = std::chrono::milliseconds(t_predict);
        c.req.time_cap = std::max(c.req.time_cap, c.req.time_budget);
    }
    // Nobody waits for a warm-up's answer: its whole prompt, the other files' chunks included,
    // goes into the slot.
    if (warm_up) c.req.prompt_budget = std::chrono::milliseconds(0);
    // The plugins fill the slot with their warm-ups: a request evaluates few of the chunks its
    // slot lacks, so a file's first request with a whole ring answers as fast as one without.
    else c.req.max_cold_extra_tokens = k_max_cold_extra_tokens;
    c.warm_up = warm_up;
    c.id = "cmpl-" + std::to_string(next_id_++);
    {
        std::lock_guard lock(slots_mu_);
        slot_entry & s = slot_for(uri);
        ++s.n_requests;
    }

    // Typed ahead: the memory may answer /infill at once, as it answers the LSP's requests.
    if (c.what == fim_call::kind::infill && !warm_up)
        if (auto hit = pipeline_->recall(c.ask)) {
            sched_->cancel_key(c.ask.key);
            completion_answer a = std::move(*hit);
            native_answer now;
            now.content = a.items.empty() ? std::string_view() : a.items.front();
            json::object full = native_object(now, {}, model_name(), c.req, model_->status().n_ctx);
            full["from_memory"] = true;
            return send_now(*out, c.stream, http_fields::select_fields(full, c.response_fields));
        }

    // A warm-up is answered at once (the plugins do not wait for it, nor read it) and runs as a
    // job of no connection's, so the client hanging up after the answer does not cancel it; the
    // file's next request queues behind it and finds the rows it left.
    if (warm_up) {
        native_answer now;
        now.stop_type = "none";
        send_now(*out, c.stream,
                 http_fields::select_fields(native_object(now, {}, model_name(), c.req, model_->status().n_ctx), c.response_fields));
        out = std::make_shared<unread_reply>();
    }
    job j;
    j.priority = job_priority::completion;
    j.owner = warm_up ? 0 : hr.owner;
    // The newest keystroke wins, per file. A warm-up neither cancels a request that waits for its
    // answer nor is cut short: the rows it leaves in the slot are what the next requests reuse.
    if (c.what == fim_call::kind::infill && !warm_up) j.supersede_key = c.ask.key;
    j.dropped = [out, this, uri](drop_reason r) {
        slot_done(uri, nullptr);
        out->respond(error_response(r == drop_reason::shutdown ? 503 : 409,
                                    r == drop_reason::superseded ? "superseded by a newer request for the same file"
                                    : r == drop_reason::shutdown ? "the daemon is shutting down" : "cancelled"));
    };
    j.run = [this, out, c = std::move(c)](std::stop_token stop) { run_fim(c, stop, out); };
    submit(std::move(j), out);
}

void http_api::run_fim(const fim_call & c, std::stop_token stop, const reply_ptr & out) {
    {
        std::lock_guard lock(slots_mu_);
        slot_for(c.ask.uri).is_processing = true;
    }
    ++processing_;
    if (c.warm_up) {   // its client has had its answer: the prompt goes into the slot, nothing more
        auto w = pipeline_->warm_up(c.req, stop);
        --processing_;
        if (!w) spdlog::warn("http {}: warm-up: {}", c.ask.uri, w.message());
        return slot_done(c.ask.uri, w ? &*w : nullptr);
    }
    auto r = pipeline_->run(c.ask, c.req, stop, /*remember=*/c.what == fim_call::kind::infill);
    --processing_;
    if (!r) {
        slot_done(c.ask.uri, nullptr);
        spdlog::warn("http {}: {}", c.ask.uri, r.message());
        return out->respond(error_response(500, "completion failed: " + r.message()));
    }
    slot_done(c.ask.uri, &r->timings);
    if (stop.stop_requested())
        return out->respond(error_response(409, "superseded by a newer request for the same file"));
    const auto & t = r->timings;
    const std::string model = model_name();
    // Generation that ran into the context's end was cut there: llama-server's "limit", truncated.
    const int32_t n_ctx = model_->status().n_ctx;
    const bool context_full = t.n_prompt_tokens + t.n_generated / std::max<int32_t>(1, c.req.n_candidates) >= n_ctx;
    // Each candidate cut at the first stop word and, for llama.vim, at a line indented less than
    // n_indent. The answer's own stop reason, as llama-server's.
    const stop_reason why = t.n_generated >= c.req.n_predict || context_full ? stop_reason::max_tokens
                                                                            : stop_reason::end_of_generation;
    std::vector<std::string> texts;
    std::vector<const char *> stops;
    for (size_t i = 0; i < std::max<size_t>(1, r->items.size()); ++i) {
        std::string text = r->items.size() <= i ? std::string() : r->items[i];
        const bool by_word = cut_at_stop_word(text, c.stop_words);
        const bool by_indent = cut_at_indent(text, c.n_indent);
        stops.push_back(by_word ? "word" : by_indent ? "limit" : stop_type(why));
        texts.push_back(std::move(text));
    }
    if (c.what == fim_call::kind::openai) {
        const json::object usage{{"prompt_tokens", t.n_prompt_tokens}, {"completion_tokens", t.n_generated},
                                 {"total_tokens", t.n_prompt_tokens + t.n_generated}};
        auto finish_of = [&](size_t i) { return std::string(stops[i]) == "limit" ? "length" : "stop"; };
        auto body = [&](json::array choices) {
            return json::object{{"id", c.id}, {"object", "text_completion"}, {"created", std::time(nullptr)}, {"model", model},
                                {"choices", std::move(choices)}};
        };
        auto choice = [&](size_t i, const std::string & piece, const json::value & finish) {
            return json::object{{"text", piece}, {"index", i}, {"logprobs", nullptr}, {"finish_reason", finish}};
        };
        if (!c.stream) {
            json::array choices;
            for (size_t i = 0; i < texts.size(); ++i) choices.push_back(choice(i, texts[i], json::string(finish_of(i))));
            json::object b = body(std::move(choices));
            b["usage"] = usage;
            b["timings"] = timings_json(t);
            return out->respond({200, "application/json", json_text(b)});
        }
        // Cleanup can cut the end of what the model generated, so each cleaned text goes as one piece.
        out->begin_events();
        for (size_t i = 0; i < texts.size(); ++i)
            if (!texts[i].empty()) out->event(json_text(body(json::array{choice(i, texts[i], nullptr)})));
        json::array last;
        for (size_t i = 0; i < texts.size(); ++i) last.push_back(choice(i, "", json::string(finish_of(i))));
        json::object b = body(std::move(last));
        b["usage"] = usage;
        b["timings"] = timings_json(t);
        out->event(json_text(b));
        out->event("[DONE]");
        return out->end_events();
    }
    int64_t id_slot = 0;
    {
        std::lock_guard lock(slots_mu_);
        id_slot = slot_for(c.ask.uri).id;
    }
    auto native = [&](size_t i, const std::string & content) {
        const native_answer a{i, content, stops[i], t.n_window_shortened > 0 || t.n_extra_dropped > 0 || context_full, id_slot};
        return native_object(a, t, model, c.req, n_ctx);
    };
    // n_cmpl above 1: an array of answers, one per candidate, as llama-server sends it.
    if (!c.stream) {
        if (c.req.n_candidates == 1)
            return out->respond({200, "application/json", json_text(http_fields::select_fields(native(0, texts[0]), c.response_fields))});
        json::array all;
        for (size_t i = 0; i < texts.size(); ++i) all.push_back(http_fields::select_fields(native(i, texts[i]), c.response_fields));
        return out->respond({200, "application/json", json_text(all)});
    }
    out->begin_events();
    for (size_t i = 0; i < texts.size(); ++i) {
        if (!texts[i].empty()) out->event(json_text(json::object{{"index", i}, {"content", texts[i]}, {"stop", false}}));
        out->event(json_text(http_fields::select_fields(native(i, ""), c.response_fields)));
    }
    out->end_events();
}

}  // namespace hearth::daemon
