// chat_service: hearth/chat and the hearth.explain / hearth.fix / hearth.ask commands.
// On the connection's strand it copies the selection (and a few lines around it) and builds
// the instruct messages; on the compute worker the job calls model_service::chat and
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
#include "daemon/services/scheduler.h"
#include "lsp/server.h"

namespace hearth::daemon {

struct chat_input {
    lsp::chat_intent intent = lsp::chat_intent::chat;
    std::string uri;
    std::string language_id;
    std::string selection;     // the selected text (may be empty)
    std::string before;        // lines before the selection
    std::string after;         // lines after the selection
    std::string prompt;        // the user's question (may be empty for explain / fix)
};

// The system and user messages for one request; the engine applies the chat template.
std::vector<chat_message> build_chat_messages(const chat_input & in);

class chat_service {
public:
    chat_service(std::shared_ptr<scheduler> sched, model_service * model, chat_settings settings);

    void handle(uint64_t owner, const lsp::chat_params & p, const lsp::request_context & ctx,
                lsp::typed_responder<lsp::chat_result> out);

    uint64_t served() const { return served_.load(); }

private:
    std::shared_ptr<scheduler> sched_;
    model_service * model_;
    chat_settings settings_;
    std::atomic<uint64_t> served_{0};
};

}  // namespace hearth::daemon
