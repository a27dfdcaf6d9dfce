// chat_stream: how a hearth/chat (or hearth.explain / .fix / .ask) answer is streamed, so
// the daemon only hands it pieces of text. With a partialResultToken, every piece is a
// `$/progress {token, value: {text: "<piece>"}}` (the partial result has the shape of the
// final result, whose text is the concatenation). With a workDoneToken, the answer is framed
// by work-done progress: begin {kind:"begin", title, cancellable:true}, one report
// {kind:"report", message: "<piece>", text: "<piece>"} per piece when there is no
// partialResultToken (commands have none), and end {kind:"end"}. The final reply always
// carries the whole text, so a client that ignores progress loses nothing.
// A piece that ends inside a UTF-8 character (a token can be half of one) keeps those bytes
// back until the next piece completes it; end() flushes them.
// Thread-safety: one chat_stream is used by one thread at a time (the compute worker);
// it sends through the thread-safe notifier.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "lsp/outgoing.h"
#include "lsp/types.h"

namespace hearth::lsp {

class chat_stream {
public:
    chat_stream(notifier n, const chat_params & p, std::string title = "hearth");

    void begin();                      // work-done begin (if a workDoneToken was given)
    void piece(std::string_view text); // one streamed piece (nothing sent for an empty one)
    void end();                        // work-done end; idempotent

    const std::string & text() const { return text_; }   // everything streamed so far

private:
    void send(std::string_view text);
    notifier notify_;
    std::optional<boost::json::value> partial_token_;
    std::optional<boost::json::value> work_token_;
    std::string title_;
    std::string text_;
    std::string held_;   // the unfinished UTF-8 sequence at the end of the last piece
    bool begun_ = false;
    bool ended_ = false;
};

}  // namespace hearth::lsp
