// request_job: queues the scheduler job that answers one LSP request. A full queue is
// answered at once (server_busy, -32000, with the scheduler's reason), and the
// request's $/cancelRequest cancels the job, queued or running. Used by every service whose
// requests run on the compute worker (completion, chat), with the answer for a daemon that
// runs without a model.
// Thread-safety: call on the connection's strand; the cancel hook may fire on any thread.
#pragma once

#include <memory>
#include <string_view>

#include "daemon/services/scheduler.h"
#include "lsp/server.h"

namespace hearth::daemon {

// The answer to a request that needs the model when the daemon runs without one.
inline constexpr std::string_view k_no_model_message =
    "no model is loaded: start the daemon with --model PATH (or `model = ...` in config.toml)";

template <class Responder>
void submit_request_job(const std::shared_ptr<scheduler> & sched, job j, const lsp::request_context & ctx, Responder & out) {
    auto id = sched->submit(std::move(j));
    if (!id) {
        out.fail(lsp::errc::server_busy, id.message());
        return;
    }
    ctx.cancel.on_cancel([weak = std::weak_ptr<scheduler>(sched), job = *id] {
        if (auto s = weak.lock()) s->cancel(job);
    });
}

}  // namespace hearth::daemon
