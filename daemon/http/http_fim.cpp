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
    std::vector<std::string> stop_words;   // OpenAI `stop`
    std::string id;                        // OpenAI response id
    bool warm_up = false;                  // n_predict 0: fill the slot, answer no text
};

namespace {

using clock_type = std::chrono::steady_clock;

// llama-server's stop_type names.
const char * stop_type(stop_reason r) {
    switch (r) {
        case stop_reason::end_of_generation: return "eos";
        case stop_reason::stop_rule: return "word";
        case stop_reason::cancelled: return "none";
        default: return "limit";
    }
}

// The text up to the first stop word (OpenAI `stop`); whether one was found.
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
    int64_t n_predict = 0, id_slot = -1, t_predict = -1, t_prompt = -1;
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
        int64_t n = 1;
        take(http_fields::integer(o, "n", 1, 1, 1), n);
        bool echo = false;
        take(http_fields::boolean(o, "echo", false), echo);
        if (ok && echo) ok = false, why = "echo: true is not supported";
        take(stop_words(o), c.stop_words);
    }
    const int64_t default_n = openai ? 16 : cs.max_tokens;
    take(http_fields::integer(o, openai ? "max_tokens" : "n_predict", default_n, -1, 4096), n_predict);
    // -1: as many as the budgets allow; 0 (llama.vim's cache warm-up): the prompt is evaluated
    // into the slot and one token generated, its text not returned.
    const bool warm_up = n_predict == 0;
    if (n_predict < 0) n_predict = openai || c.what == fim_call::kind::completion ? 4096 : cs.max_tokens;
    if (warm_up) n_predict = 1;
    take(http_fields::integer(o, "id_slot", -1, -1, 1 << 20), id_slot);
    take(http_fields::integer(o, "t_max_predict_ms", -1, -1, 600000), t_predict);
    take(http_fields::integer(o, "t_max_prompt_ms", -1, -1, 600000), t_prompt);
    take(http_fields::text(o, "filename"), filename);
    take(http_fields::boolean(o, "stream", false), c.stream);
    // Sampling is the pipeline's (greedy first candidate); these are accepted for the
    // clients that always send them, and type-checked.
    double unused = 0;
    take(http_fields::number(o, "temperature", 0, 0, 100), unused);
    take(http_fields::number(o, "top_p", 1, 0, 1), unused);
    int64_t unused_i = 0;
    take(http_fields::integer(o, "top_k", 0, -1, 1 << 20), unused_i);
    bool unused_b = false;
    take(http_fields::boolean(o, "cache_prompt", true), unused_b);
    std::vector<context_chunk> extra;
    take(extra_chunks(o), extra);
    if (!ok) return out->respond(error_response(400, why));

    // The KV slot is the file's: named, else the client's slot number, else one shared key.
    const std::string uri = !filename.empty() ? filename : id_slot >= 0 ? "slot-" + std::to_string(id_slot) : "untitled";
    c.ask.key = "http\n" + uri;
    c.ask.uri = uri;
    c.ask.text = prefix + suffix;
    c.ask.cursor = prefix.size();
    c.ask.extra = std::move(extra);
    c.req = pipeline_->request_for(c.ask);
    c.req.n_predict = static_cast<int32_t>(n_predict);
    if (c.what != fim_call::kind::infill) {
        // A prompt to continue, not ghost text at a cursor: no single-line rule, the chat's time.
        c.req.mode = completion_mode::multi_line;
        c.req.time_budget = c.req.time_cap = std::chrono::milliseconds(cfg_.chat.time_budget_ms);
    }
    if (t_predict > 0) {
        c.req.time_budget = std::chrono::milliseconds(t_predict);
        c.req.time_cap = std::max(c.req.time_cap, c.req.time_budget);
    }
    if (t_prompt > 0) c.req.prompt_budget = std::chrono::milliseconds(t_prompt);
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
            json::object r{{"content", a.items.empty() ? std::string() : a.items.front()}, {"stop", true}, {"stop_type", "eos"},
                           {"tokens_cached", 0}, {"tokens_predicted", 0}, {"tokens_evaluated", 0}, {"truncated", false},
                           {"model", model_name()}, {"from_memory", true}, {"timings", timings_json({})}};
            if (c.stream) {
                out->begin_events();
                out->event(json_text(r));
                out->end_events();
            } else {
                out->respond({200, "application/json", json_text(r)});
            }
            return;
        }

    job j;
    j.priority = job_priority::completion;
    j.owner = hr.owner;
    if (c.what == fim_call::kind::infill) j.supersede_key = c.ask.key;   // newest keystroke wins, per file
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
    auto r = pipeline_->run(c.ask, c.req, stop, /*remember=*/c.what == fim_call::kind::infill && !c.warm_up);
    --processing_;
    if (!r) {
        slot_done(c.ask.uri, nullptr);
        spdlog::warn("http {}: {}", c.ask.uri, r.message());
        return out->respond(error_response(500, "completion failed: " + r.message()));
    }
    slot_done(c.ask.uri, &r->timings);
    if (stop.stop_requested())
        return out->respond(error_response(409, "superseded by a newer request for the same file"));
    std::string text = r->items.empty() || c.warm_up ? std::string() : r->items.front();
    const auto & t = r->timings;
    const stop_reason why = r->timings.n_generated >= c.req.n_predict ? stop_reason::max_tokens : stop_reason::end_of_generation;
    const bool by_word = cut_at_stop_word(text, c.stop_words);
    const std::string model = model_name();
    if (c.what == fim_call::kind::openai) {
        const char * finish = by_word || why != stop_reason::max_tokens ? "stop" : "length";
        const json::object usage{{"prompt_tokens", t.n_prompt_tokens}, {"completion_tokens", t.n_generated},
                                 {"total_tokens", t.n_prompt_tokens + t.n_generated}};
        auto body = [&](const std::string & piece, const json::value & finish_reason) {
            return json::object{{"id", c.id}, {"object", "text_completion"}, {"created", std::time(nullptr)}, {"model", model},
                                {"choices", json::array{json::object{{"text", piece}, {"index", 0}, {"logprobs", nullptr},
                                                                     {"finish_reason", finish_reason}}}}};
        };
        if (!c.stream) {
            json::object b = body(text, json::string(finish));
            b["usage"] = usage;
            b["timings"] = timings_json(t);
            return out->respond({200, "application/json", json_text(b)});
        }
        // Cleanup can cut the end of what the model generated, so the cleaned text goes as one piece.
        out->begin_events();
        if (!text.empty()) out->event(json_text(body(text, nullptr)));
        json::object last = body("", json::string(finish));
        last["usage"] = usage;
        last["timings"] = timings_json(t);
        out->event(json_text(last));
        out->event("[DONE]");
        return out->end_events();
    }
    json::object b{{"index", 0},
                   {"content", text},
                   {"id_slot", 0},
                   {"stop", true},
                   {"model", model},
                   {"tokens_predicted", t.n_generated},
                   {"tokens_evaluated", t.n_prompt_tokens},
                   {"tokens_cached", t.n_cached_tokens},
                   {"truncated", t.n_window_shortened > 0},
                   {"stop_type", stop_type(why)},
                   {"stopping_word", ""},
                   {"has_new_line", text.find('\n') != std::string::npos},
                   {"timings", timings_json(t)}};
    {
        std::lock_guard lock(slots_mu_);
        b["id_slot"] = slot_for(c.ask.uri).id;
    }
    if (!c.stream) return out->respond({200, "application/json", json_text(b)});
    out->begin_events();
    if (!text.empty()) out->event(json_text(json::object{{"index", 0}, {"content", text}, {"stop", false}}));
    b["content"] = "";
    out->event(json_text(b));
    out->end_events();
}

}  // namespace hearth::daemon
