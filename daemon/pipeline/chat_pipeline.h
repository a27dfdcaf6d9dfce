// chat_pipeline: the one path from a question (and the code it is about) to a streamed
// answer, used by the LSP's hearth/chat and its explain / fix / ask commands
// (daemon/services/chat_service.h) and by `hearth chat` (daemon/cli/cli_generate.cpp):
//   the intent and the selection -> the system and user messages (build_chat_messages)
//   -> the request with the chat settings' budgets -> model_service::chat, which applies the
//   model's own chat template and streams the pieces.
// Thread-safety: request_for() is pure; run() follows model_service's rule (one caller at a time).
#pragma once

#include <stop_token>
#include <string>
#include <vector>

#include "base/result.h"
#include "daemon/engine/model_service.h"
#include "daemon/settings/config.h"

namespace hearth::daemon {

enum class chat_intent { chat, explain, fix, ask };

struct chat_input {
    chat_intent intent = chat_intent::chat;
    std::string uri;
    std::string language_id;
    std::string selection;     // the selected text (may be empty)
    std::string before;        // lines before the selection
    std::string after;         // lines after the selection
    std::string prompt;        // the user's question (may be empty for explain / fix)
};

// The system and user messages for one request; the engine applies the chat template.
// system: the system message ("": none).
std::vector<chat_message> build_chat_messages(const chat_input & in, const std::string & system);

// The lines [first, last] (0-based, inclusive, clamped) of `text` as a selection, with up to
// context_lines lines before and after it: what an editor sends for a selection of whole lines.
chat_input selection_of_lines(std::string_view text, int64_t first, int64_t last, int32_t context_lines);

class chat_pipeline {
public:
    chat_pipeline(model_service * model, chat_settings settings) : model_(model), settings_(std::move(settings)) {}

    const chat_settings & settings() const { return settings_; }
    chat_request request_for(const chat_input & in) const;
    result<chat_answer> run(const chat_request & req, std::stop_token stop, const piece_callback & on_piece) {
        return model_->chat(req, stop, on_piece);
    }

private:
    model_service * model_;
    chat_settings settings_;
};

}  // namespace hearth::daemon
