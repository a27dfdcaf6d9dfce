#include "lsp/chat_stream.h"

#include <utility>

#include <boost/json/object.hpp>

#include "lsp/utf8.h"

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

void chat_stream::piece(std::string_view raw) {
    text_.append(raw);
    held_.append(raw);
    const size_t n = utf8_complete_prefix(held_);
    if (n == 0) return;
    const std::string text = held_.substr(0, n);
    held_.erase(0, n);
    send(text);
}

void chat_stream::send(std::string_view text) {
    begin();
    if (partial_token_) {
        notify_.progress(*partial_token_, boost::json::object{{"text", text}});
    } else if (work_token_) {
        notify_.progress(*work_token_, boost::json::object{{"kind", "report"}, {"message", text}, {"text", text}});
    }
}

void chat_stream::end() {
    if (ended_) return;
    if (!held_.empty()) send(std::exchange(held_, {}));   // an unfinished character: sent as U+FFFD
    begin();
    ended_ = true;
    if (work_token_) notify_.progress(*work_token_, boost::json::object{{"kind", "end"}});
}

}  // namespace hearth::lsp
