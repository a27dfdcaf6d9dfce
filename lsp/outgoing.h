// The outgoing side of one connection: the transport's send callback behind a mutex, so
// responders and notifiers may send from any thread (the compute worker streams $/progress
// while the server thread keeps reading). close() is a barrier: once it returns, the send
// callback is never called again and later sends are dropped (their work is cancelled).
// Every body is made valid UTF-8 on the way out (invalid bytes become U+FFFD).
// The send callback receives one unframed JSON body per call and must not call back into
// the server (it should only queue the bytes onto the transport's own thread).
// Thread-safety: outgoing_channel and notifier are safe to use from any thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace hearth::lsp {

using send_fn = std::function<void(std::string body)>;

class outgoing_channel {
public:
    explicit outgoing_channel(send_fn send) : send_(std::move(send)) {}
    bool send(std::string body);   // false (and nothing sent) once closed
    void close();
    bool closed() const;

private:
    mutable std::mutex mu_;
    send_fn send_;
    bool closed_ = false;
};

// window/logMessage and window/showMessage severities, as the spec numbers them.
enum class message_type { error = 1, warning = 2, info = 3, log = 4 };

// Server-to-client notifications; cheap to copy, usable from any thread.
class notifier {
public:
    notifier() = default;   // sends nothing
    explicit notifier(std::shared_ptr<outgoing_channel> ch) : ch_(std::move(ch)) {}
    bool notify(std::string_view method, const boost::json::value & params) const;
    // $/progress {token, value}; token is the client's partialResultToken/workDoneToken.
    bool progress(const boost::json::value & token, const boost::json::value & value) const;
    bool log_message(message_type type, std::string_view text) const;   // window/logMessage

private:
    std::shared_ptr<outgoing_channel> ch_;
};

}  // namespace hearth::lsp
