#include "daemon/bench/trace_replay.h"

#include <algorithm>
#include <map>
#include <set>

#include <xxhash.h>

#include "daemon/pipeline/completion_pipeline.h"

namespace hearth::daemon {
namespace {

struct document {
    std::string text;
    size_t cursor = 0;
    std::string shown;          // the suggestion on screen at the cursor ("" when none)
};

// Line (0-based) of a byte offset: where the extra context's ring takes its piece.
int64_t line_of(const std::string & text, size_t offset) {
    return std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(std::min(offset, text.size())), '\n');
}

class replayer {
public:
    replayer(model_service & model, const replay_options & ro) : model_(model), ro_(ro), pipeline_(&model, ro.settings) {}

    result<replay_result> run(const std::vector<trace_event> & events) {
        status s;
        for (size_t i = 0; i < events.size() && s; ++i)
            if (s = step(events[i]); !s) s = fail("trace event ", i + 1, ": ", s.message());
        for (const auto & uri : used_) model_.release_document(uri);
        if (!s) return s.error();
        return std::move(out_);
    }

private:
    static constexpr uint64_t k_owner = 1;   // the one editor connection

    status step(const trace_event & e) {
        if (e.op == trace_event::kind::open) {
            docs_[e.uri] = document{e.text, 0, ""};
            pipeline_.document_opened(k_owner, e.uri, e.text);
            return {};
        }
        auto it = docs_.find(e.uri);
        if (it == docs_.end()) return fail("document ", e.uri, " is not open");
        document & d = it->second;
        switch (e.op) {
        case trace_event::kind::edit: {
            auto end = apply_trace_edit(d.text, e);
            if (!end) return end.error();
            d.cursor = *end;
            d.shown.clear();
            return {};
        }
        case trace_event::kind::type:
            d.text.insert(d.cursor, e.text);
            d.cursor += e.text.size();
            d.shown.clear();
            return {};
        case trace_event::kind::type_suggestion:
        case trace_event::kind::accept: {
            // Nothing shown (the model had nothing to add): there is nothing to type or accept.
            if (d.shown.empty()) return {};
            // Typing leaves at least one byte of the suggestion; accepting inserts all of it.
            size_t n = d.shown.size();
            if (e.op == trace_event::kind::type_suggestion) n = std::min<size_t>(static_cast<size_t>(e.chars), n - 1);
            d.text.insert(d.cursor, d.shown, 0, n);
            d.cursor += n;
            d.shown.clear();
            return {};
        }
        case trace_event::kind::complete: {
            if (e.line >= 0) {
                auto c = trace_offset(d.text, e.line, e.col);
                if (!c) return c.error();
                d.cursor = *c;
            }
            return complete(e.uri, d);
        }
        case trace_event::kind::open: break;
        }
        return {};
    }

    // What the LSP service does for one textDocument/inlineCompletion, in the same order.
    status complete(const std::string & uri, document & d) {
        completion_ask ask;
        ask.key = uri;
        ask.uri = uri;
        ask.text = d.text;
        ask.cursor = d.cursor;
        ask.extra = pipeline_.extra_context(k_owner, uri, line_of(d.text, d.cursor), [this](const std::string & u) {
            auto it = docs_.find(u);
            return it == docs_.end() ? std::nullopt : std::optional<std::string>(it->second.text);
        });
        replay_record r;
        r.doc_hash = XXH3_64bits(d.text.data(), d.text.size()) ^ (d.cursor * 0x9E3779B97F4A7C15ull);
        std::optional<completion_answer> answer = pipeline_.recall(ask);
        if (!answer) {
            if (ro_.cold) model_.release_document(uri);
            used_.insert(uri);
            auto ran = pipeline_.run(ask, pipeline_.request_for(ask), {}, /*remember=*/true);
            if (!ran) return ran.error();
            answer = std::move(*ran);
        }
        r.from_memory = answer->from_memory;
        r.n_prompt = answer->timings.n_prompt_tokens;
        r.n_reused = answer->timings.n_cached_tokens;
        r.n_shifted = answer->timings.n_shifted_tokens;
        r.n_evaluated = answer->timings.n_prompt_tokens - answer->timings.n_cached_tokens;
        r.ttft_ms = answer->ttft_ms;
        r.total_ms = answer->ms;
        r.text = answer->items.empty() ? std::string() : answer->items.front();
        d.shown = r.text;
        out_.completions.push_back(std::move(r));
        // The daemon computes the completion after the accept while the suggestion is shown.
        if (!d.shown.empty())
            if (auto next = pipeline_.after_accept(ask, d.shown)) {
                if (ro_.cold) model_.release_document(uri);
                if (auto ms = pipeline_.prefetch(*next, {})) out_.prefetch_ms.push_back(*ms);
            }
        return {};
    }

    model_service & model_;
    replay_options ro_;
    completion_pipeline pipeline_;
    std::map<std::string, document> docs_;
    std::set<std::string> used_;   // documents whose slots the model holds
    replay_result out_;
};

}  // namespace

result<replay_result> replay_trace(model_service & model, const std::vector<trace_event> & events, const replay_options & ro) {
    return replayer(model, ro).run(events);
}

}  // namespace hearth::daemon
