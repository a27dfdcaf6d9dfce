// completion_service: textDocument/inlineCompletion, the protocol's side of the completion
// pipeline (daemon/pipeline/completion_pipeline.h). On the connection's strand it copies the
// document as the editor shows it and the cursor's range, asks the pipeline's memory, then
// queues a job at completion priority; on the compute worker the job runs the pipeline and
// answers with InlineCompletionItems.
// Newest keystroke wins: a request supersedes every older one for the same document of the
// same connection (queued: answered -32800 at once; running: stopped at its next token).
// Automatic triggers wait `debounce` for the next keystroke; Invoked ones run at once and
// ask for several ranked candidates; an edit cancels what is in flight for that document.
// Extra context (`extra-context-chunks`): pieces of the other files of the connection that
// were opened or worked in lately go first in the prompt (daemon/pipeline/context_ring.h).
// Suggestion memory (switches `typed-ahead`, `prefetch`): an Automatic request whose cursor
// text extends a suggestion already made is answered from it at once; after each answer a
// background job computes the completion that follows accepting its first item, so the
// next request after the accept is answered from memory too.
// Thread-safety: handle() and document_changed() on a connection's strand; the job runs on
// the worker; shared counters are atomics; the memory locks.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/engine/model_service.h"
#include "daemon/pipeline/completion_pipeline.h"
#include "daemon/services/scheduler.h"
#include "daemon/settings/config.h"
#include "lsp/server.h"

#include <boost/json/object.hpp>

namespace hearth::daemon {

class completion_service {
public:
    completion_service(std::shared_ptr<scheduler> sched, model_service * model, completion_settings settings);

    void handle(uint64_t owner, const lsp::inline_completion_params & p, const lsp::request_context & ctx,
                lsp::typed_responder<lsp::inline_completion_list> out);
    // An edit: completions queued or running for this document are stale.
    void document_changed(uint64_t owner, std::string_view uri);

    // The pipeline itself, for the other transports' completions (daemon/http).
    completion_pipeline & pipeline() { return pipeline_; }
    double last_completion_ms() const { return last_ms_.load(); }
    uint64_t served() const { return served_.load(); }
    uint64_t answered_from_memory() const { return pipeline_.answered_from_memory(); }
    uint64_t prefetched() const { return pipeline_.prefetched(); }
    // Why answers came back cut, trimmed or empty (hearth/status `completionOutcomes`): how
    // the first candidate's generation ended, which cleanup filter cut it, and why answers
    // were empty (`model`: the model gave nothing; else the filter that removed all of it).
    boost::json::object outcomes_json() const;
    // The document was closed by this connection: its suggestions are forgotten.
    void forget_document(uint64_t owner, std::string_view uri);
    // A document was opened: its top becomes extra context for the connection's other files,
    // and its window at the top is warmed (see warm_up) once the editor stops opening files.
    void document_opened(uint64_t owner, const lsp::document & d, const lsp::document_store & docs);
    // The cursor came to rest (hearth/cursorRest): the window a request there would evaluate
    // goes into the document's KV slot in the background, below every request and preempted
    // by any other. Bounded: one warm-up per connection, the newest place replacing an older
    // one still queued or running. A completion request of the connection at the same place
    // (the document, within a few lines) waits for one that runs: the warm-up's rows are the
    // request's head, and typing there changes only the cursor line; one not begun, or one
    // elsewhere, the request drops.
    void warm_up(uint64_t owner, const lsp::document & d, const lsp::position & at, const lsp::document_store & docs,
                 std::chrono::milliseconds debounce = std::chrono::milliseconds(0));
    // The connection closed: its extra context goes.
    void forget_owner(uint64_t owner);

private:
    std::shared_ptr<scheduler> sched_;
    bool has_model_;
    completion_pipeline pipeline_;
    std::atomic<double> last_ms_{0};
    std::atomic<uint64_t> served_{0};
    std::atomic<uint64_t> next_item_id_{1};
    // Where each connection's latest warm-up was asked for.
    struct warm_place {
        std::string uri;
        int64_t line = 0;
    };
    std::mutex warm_mu_;
    std::map<uint64_t, warm_place> warm_places_;
    bool continues_warm_up(uint64_t owner, const std::string & uri, int64_t line);

    lsp::inline_completion_list make_list(const std::string & uri, const std::vector<std::string> & inserts,
                                          const std::string & selected, const lsp::range & replace, uint64_t first_item_id);
    void submit_prefetch(uint64_t owner, const completion_ask & shown, const std::string & accepted);
    std::vector<context_chunk> extra_context_of(uint64_t owner, const lsp::document & d, int64_t line,
                                                const lsp::document_store * docs);
};

// "<owner>\n<uri>": the scheduler's supersede key of a document's completions.
std::string completion_key(uint64_t owner, std::string_view uri);

}  // namespace hearth::daemon
