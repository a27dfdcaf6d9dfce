// chat_service: hearth/chat and the hearth.explain / hearth.fix / hearth.ask commands.
// On the connection's strand it copies the selection (and a few lines around it) and asks the
// chat pipeline (daemon/pipeline/chat_pipeline.h) for the request; on the compute worker the
// job runs the pipeline and
// streams each piece as $/progress (lsp::chat_stream: partialResultToken or workDoneToken);
// the reply carries the whole text. Chat runs below inline completion in priority, and is
// stopped at its next token by $/cancelRequest or by the connection going away.
// Thread-safety: handle() on a connection's strand; the job on the worker.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "daemon/settings/config.h"
#include "daemon/engine/model_service.h"
#include "daemon/pipeline/chat_pipeline.h"
#include "daemon/services/scheduler.h"
#include "lsp/server.h"

namespace hearth::daemon {

class chat_service {
public:
    chat_service(std::shared_ptr<scheduler> sched, model_service * model, chat_settings settings);

    void handle(uint64_t owner, const lsp::chat_params & p, const lsp::request_context & ctx,
                lsp::typed_responder<lsp::chat_result> out);

    uint64_t served() const { return served_.load(); }

private:
    std::shared_ptr<scheduler> sched_;
    bool has_model_;
    chat_pipeline pipeline_;
    std::atomic<uint64_t> served_{0};
};

}  // namespace hearth::daemon
