// completion_service: textDocument/inlineCompletion. On the connection's strand it copies
// what the job needs from the document store (the FIM window, the cursor's range), then
// queues a job at completion priority; on the compute worker the job calls
// model_service::complete and answers with InlineCompletionItems.
// Newest keystroke wins: a request supersedes every older one for the same document of the
// same connection (queued: answered -32800 at once; running: stopped at its next token).
// Automatic triggers wait `debounce` for the next keystroke; Invoked ones run at once and
// ask for several ranked candidates; an edit cancels what is in flight for that document.
// Thread-safety: handle() and document_changed() on a connection's strand; the job runs on
// the worker; shared counters are atomics.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "daemon/config.h"
#include "daemon/model_service.h"
#include "daemon/scheduler.h"
#include "lsp/server.h"

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

private:
    std::shared_ptr<scheduler> sched_;
    model_service * model_;
    completion_settings settings_;
    std::atomic<double> last_ms_{0};
    std::atomic<uint64_t> served_{0};
    std::atomic<uint64_t> next_item_id_{1};
};

// "<owner>\n<uri>": the scheduler's supersede key of a document's completions.
std::string completion_key(uint64_t owner, std::string_view uri);

}  // namespace hearth::daemon
