// next_edit_service: hearth/nextEdit, the protocol's side of the next-edit pipeline
// (daemon/pipeline/next_edit_pipeline.h). On the connection's strand it copies the document
// (its text, line index and coalesced edit history) and queues a job at completion priority;
// on the compute worker the job runs the pipeline and answers with the predicted edits, their
// ranges in the connection's position encoding. `[next_edit] enabled = false` answers every
// request with no edit, at once.
// Cancelled and superseded as completions are (scheduler.h): $/cancelRequest stops it, a newer
// request for the same document supersedes it, and an edit to the document cancels it; each
// answers RequestCancelled. The cursor coming to rest (hearth/cursorRest) queues a warm-up
// that puts the prompt a request there would use into the model's slot, below every request
// and stopped by any (its rows stay), so a request after a pause costs mostly generation.
// Thread-safety: handle(), document_changed() and warm_up() on a connection's strand; the job
// runs on the worker; counters are atomics.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "daemon/engine/model_service.h"
#include "daemon/pipeline/next_edit_pipeline.h"
#include "daemon/services/scheduler.h"
#include "daemon/settings/config.h"
#include "lsp/server.h"

namespace hearth::daemon {

class next_edit_service {
public:
    next_edit_service(std::shared_ptr<scheduler> sched, model_service * model, next_edit_settings settings);

    void handle(uint64_t owner, const lsp::next_edit_params & p, const lsp::request_context & ctx,
                lsp::typed_responder<lsp::next_edit_result> out);
    // An edit: a prediction queued or running for this document is stale.
    void document_changed(uint64_t owner, std::string_view uri);
    void warm_up(uint64_t owner, const lsp::document & d, const lsp::position & at);

    uint64_t served() const { return served_.load(); }
    uint64_t predicted() const { return predicted_.load(); }   // answers with at least one edit
    double last_ms() const { return last_ms_.load(); }

private:
    std::shared_ptr<scheduler> sched_;
    bool has_model_;
    next_edit_pipeline pipeline_;
    std::atomic<uint64_t> served_{0};
    std::atomic<uint64_t> predicted_{0};
    std::atomic<uint64_t> next_id_{1};
    std::atomic<double> last_ms_{0};
};

// The ask of a request at `at`: the document's text and its edit history, copied.
next_edit_ask next_edit_ask_of(const lsp::document & d, const lsp::position & at);

}  // namespace hearth::daemon
