// completion_service: textDocument/inlineCompletion. On the connection's strand it copies
// what the job needs from the document store (the FIM window, the cursor's range), then
// queues a job at completion priority; on the compute worker the job calls
// model_service::complete and answers with InlineCompletionItems.
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

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/settings/config.h"
#include "daemon/pipeline/context_ring.h"
#include "daemon/pipeline/fim_window.h"
#include "daemon/engine/model_service.h"
#include "daemon/services/scheduler.h"
#include "daemon/pipeline/suggestion_memory.h"
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

    double last_completion_ms() const { return last_ms_.load(); }
    uint64_t served() const { return served_.load(); }
    uint64_t answered_from_memory() const { return memory_.hits(); }
    uint64_t prefetched() const { return prefetched_.load(); }
    // Why answers came back cut, trimmed or empty (hearth/status `completionOutcomes`): how
    // the first candidate's generation ended, which cleanup filter cut it, and why answers
    // were empty (`model`: the model gave nothing; else the filter that removed all of it).
    boost::json::object outcomes_json() const;
    // The document was closed by this connection: its suggestions are forgotten.
    void forget_document(uint64_t owner, std::string_view uri);
    // A document was opened: its top becomes extra context for the connection's other files.
    void document_opened(uint64_t owner, const lsp::document & d);
    // The connection closed: its extra context goes.
    void forget_owner(uint64_t owner);

private:
    std::shared_ptr<scheduler> sched_;
    model_service * model_;
    completion_settings settings_;
    std::atomic<double> last_ms_{0};
    std::atomic<uint64_t> served_{0};
    std::atomic<uint64_t> next_item_id_{1};
    std::atomic<uint64_t> prefetched_{0};
    std::array<std::atomic<uint64_t>, k_n_stop_reasons> ends_{};       // by the first candidate's stop_reason
    std::array<std::atomic<uint64_t>, k_n_cleanup_filters> trimmed_{};  // by cleanup_filter
    std::array<std::atomic<uint64_t>, k_n_cleanup_filters> emptied_{};  // [none]: the model gave nothing
    std::atomic<uint64_t> empty_{0};
    suggestion_memory memory_;
    // Extra context per connection: the ring, and the file and line of the last request (a
    // piece of it joins the ring when the user moves to another file).
    struct owner_context {
        context_ring ring;
        std::string last_uri;
        int64_t last_line = 0;
    };
    std::mutex context_mu_;
    std::map<uint64_t, owner_context> contexts_;

    owner_context & context_of(uint64_t owner);   // context_mu_ held
    std::vector<context_chunk> extra_context_for(uint64_t owner, const lsp::document & doc, int64_t line,
                                                 const lsp::document_store * docs);

    // A request for the document with the settings filled in; the cursor's window, mode and
    // candidate count are the caller's.
    fim_request base_request(const lsp::document & doc, std::vector<context_chunk> extra) const;
    lsp::inline_completion_list make_list(const std::string & uri, const std::vector<std::string> & inserts,
                                          const std::string & selected, const lsp::range & replace, uint64_t first_item_id);
    // Cleans the candidates into the items to insert, counts the outcome and logs why an
    // answer is cut, trimmed or empty.
    std::vector<std::string> clean_and_record(const fim_request & req, const completion & r, double ms);
    void submit_prefetch(uint64_t owner, fim_request req, std::string before, std::string after, std::string accepted);
};

// "<owner>\n<uri>": the scheduler's supersede key of a document's completions.
std::string completion_key(uint64_t owner, std::string_view uri);

}  // namespace hearth::daemon
