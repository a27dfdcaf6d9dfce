#include "lsp/outgoing.h"

#include <boost/json/object.hpp>

#include "lsp/jsonrpc.h"
#include "lsp/utf8.h"

namespace hearth::lsp {

bool outgoing_channel::send(std::string body) {
    // Sending under the lock makes close() a barrier: no send can be under way after it.
    std::lock_guard lock(mu_);
    if (closed_ || !send_) return false;
    // JSON must be UTF-8; text from outside (model output, echoed input) may not be.
    if (!is_valid_utf8(body)) body = to_valid_utf8(body);
    send_(std::move(body));
    return true;
}

void outgoing_channel::close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    send_ = nullptr;
}

bool outgoing_channel::closed() const {
    std::lock_guard lock(mu_);
    return closed_;
}

bool notifier::notify(std::string_view method, const boost::json::value & params) const {
    if (!ch_) return false;
    return ch_->send(notification_body(method, params));
}

bool notifier::progress(const boost::json::value & token, const boost::json::value & value) const {
    boost::json::object p;
    p["token"] = token;
    p["value"] = value;
    return notify("$/progress", p);
}

bool notifier::log_message(message_type type, std::string_view text) const {
    boost::json::object p;
    p["type"] = static_cast<int>(type);
    p["message"] = text;
    return notify("window/logMessage", p);
}

}  // namespace hearth::lsp
