// completion_pipeline: the one path from a document and a cursor to the text an editor shows,
// used by the LSP service (daemon/services/completion_service.h) and by `hearth bench trace`
// (daemon/bench/trace_replay.h), so the benchmark times what the daemon does:
//   extra context (other files the user worked in, context_ring.h)
//   -> the suggestion memory (typed ahead or prefetched: no model run, suggestion_memory.h)
//   -> the FIM window on the line grid and the single/multi-line decision (fim_window.h)
//   -> the model: slot choice, prefill, generation, stop rules (model_service::complete)
//   -> cleanup (fim_window.h: trim_completion) and the outcome counters
//   -> remembering the answer, and the prefetch of the completion after its accept.
// The caller schedules: recall() and request_for() are cheap and run where the request
// arrives; run() and prefetch() call the model and run on the compute worker.
// Thread-safety: every member may be called from any thread; the counters are atomics, the
// memory and the context rings lock. model_service's own rule holds: run() and prefetch()
// only from one thread at a time (the scheduler's worker).
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "daemon/engine/model_service.h"
#include "daemon/pipeline/context_ring.h"
#include "daemon/pipeline/fim_window.h"
#include "daemon/pipeline/suggestion_memory.h"
#include "daemon/settings/config.h"

namespace hearth::daemon {

// One request for a suggestion: the document as the editor shows it and the cursor in it.
struct completion_ask {
    std::string key;             // whose suggestions these are (memory); the daemon's is completion_key()
    std::string uri;             // the document; keys its KV slot
    std::string language_id;
    std::string text;            // the whole document as shown
    size_t cursor = 0;           // byte offset into text
    bool invoked = false;        // asked for explicitly: fresh ranked candidates, not the memory
    std::vector<context_chunk> extra;   // from extra_context()

    // The text before and after the cursor: what the suggestion memory keys on.
    std::string_view before() const { return std::string_view(text).substr(0, cursor); }
    std::string_view after() const { return std::string_view(text).substr(cursor); }
};

struct completion_answer {
    std::vector<std::string> items;   // texts to insert at the cursor, best first; may be empty
    bool from_memory = false;         // typed ahead or prefetched: the model did not run
    double ms = 0;                    // the whole call
    double ttft_ms = 0;               // to the first generated piece (ms when nothing was generated)
    generation_timings timings;       // the model's (zero from memory)
};

// Why answers came back cut, trimmed or empty (hearth/status `completionOutcomes`).
struct completion_outcomes {
    std::array<std::atomic<uint64_t>, k_n_stop_reasons> ends{};       // by the first candidate's stop_reason
    std::array<std::atomic<uint64_t>, k_n_cleanup_filters> trimmed{};  // by cleanup_filter
    std::array<std::atomic<uint64_t>, k_n_cleanup_filters> emptied{};  // [none]: the model gave nothing
    std::atomic<uint64_t> empty{0};
};

class completion_pipeline {
public:
    completion_pipeline(model_service * model, completion_settings settings);

    const completion_settings & settings() const { return settings_; }

    // The pieces of other files to put before this document's window: owner's ring, after
    // the previous request's file (if another one) joined it. text_of gives a document's
    // current text by uri (nullopt: no longer open).
    using text_lookup = std::function<std::optional<std::string>(const std::string & uri)>;
    std::vector<context_chunk> extra_context(uint64_t owner, const std::string & uri, int64_t line,
                                             const text_lookup & text_of);
    // A document was opened: its top becomes extra context for the owner's other files.
    void document_opened(uint64_t owner, const std::string & uri, std::string_view text);
    // The owner (a connection) went away: its extra context goes.
    void forget_owner(uint64_t owner);
    // The document was closed: its remembered suggestions go.
    void forget(const std::string & key) { memory_.forget(key); }

    // The answer from the suggestion memory, when the switches allow it and the typed text
    // extends a remembered suggestion; nullopt: the model must run.
    std::optional<completion_answer> recall(const completion_ask & a);
    // The model request for the ask: the window, the mode, the budgets and candidate count.
    fim_request request_for(const completion_ask & a) const;
    // Runs the model on the request made by request_for(a), cleans the candidates, counts the
    // outcome, logs why an answer was cut or empty, and remembers the answer (remember: the
    // items will be shown as they are).
    result<completion_answer> run(const completion_ask & a, const fim_request & req, std::stop_token stop,
                                  bool remember);
    // The ask that follows accepting `accepted` at a's cursor; nullopt when prefetch is off or
    // it is remembered already.
    std::optional<completion_ask> after_accept(const completion_ask & a, const std::string & accepted) const;
    // Computes that ask's answer into the memory; returns its time, nullopt when it was
    // stopped, failed or gave nothing.
    std::optional<double> prefetch(const completion_ask & next, std::stop_token stop);
    // The window a request at a's cursor would evaluate, put into the document's KV slot with
    // nothing generated (fim_request::prefill_only), so the request finds it computed; a stop
    // keeps what was computed. The prefill's timings, or the model's error.
    result<generation_timings> warm_up(const fim_request & req, std::stop_token stop);

    uint64_t answered_from_memory() const { return memory_.hits(); }
    uint64_t prefetched() const { return prefetched_.load(); }
    const completion_outcomes & outcomes() const { return outcomes_; }

private:
    model_service * model_;
    completion_settings settings_;
    suggestion_memory memory_;
    completion_outcomes outcomes_;
    std::atomic<uint64_t> prefetched_{0};
    // Extra context per owner: the ring, and the file and line of the last request (a piece
    // of it joins the ring when the user moves to another file).
    struct owner_context {
        context_ring ring;
        std::string last_uri;
        int64_t last_line = 0;
    };
    std::mutex context_mu_;
    std::map<uint64_t, owner_context> contexts_;

    owner_context & context_of(uint64_t owner);   // context_mu_ held
    std::vector<std::string> clean_and_record(const fim_request & req, const completion & r, double ms);
};

}  // namespace hearth::daemon
