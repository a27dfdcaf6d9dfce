#include "lsp/chat_stream.h"

#include <boost/json/object.hpp>

namespace hearth::lsp {

chat_stream::chat_stream(notifier n, const chat_params & p, std::string title)
    : notify_(std::move(n)), partial_token_(p.partialResultToken), work_token_(p.workDoneToken), title_(std::move(title)) {}

void chat_stream::begin() {
    if (begun_) return;
    begun_ = true;
    if (work_token_) {
        notify_.progress(*work_token_, boost::json::object{{"kind", "begin"}, {"title", title_}, {"cancellable", true}});
    }
}

void chat_stream::piece(std::string_view text) {
    if (text.empty()) return;
    begin();
    text_.append(text);
    if (partial_token_) {
        notify_.progress(*partial_token_, boost::json::object{{"text", text}});
    } else if (work_token_) {
        notify_.progress(*work_token_, boost::json::object{{"kind", "report"}, {"message", text}, {"text", text}});
    }
}

void chat_stream::end() {
    if (ended_) return;
    begin();
    ended_ = true;
    if (work_token_) notify_.progress(*work_token_, boost::json::object{{"kind", "end"}});
}

}  // namespace hearth::lsp
