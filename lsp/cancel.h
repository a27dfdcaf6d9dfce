// Cancellation of one request: the server keeps a cancel_source per request in flight and
// hands the handler a cancel_token. `$/cancelRequest`, an `exit`, or a closed connection
// flip it; the handler polls requested() (once per token, not per element) or registers
// on_cancel() to dequeue work that has not started, and then answers -32800 itself.
// Thread-safety: all members may be called from any thread. on_cancel callbacks run once,
// on the thread that calls cancel() (the server's thread), or at once in on_cancel() if
// the token is already cancelled; they must be short and must not block.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace hearth::lsp {

namespace detail {
struct cancel_state {
    std::atomic<bool> requested{false};
    std::mutex mu;
    std::vector<std::function<void()>> callbacks;
};
}  // namespace detail

class cancel_token {
public:
    cancel_token() = default;   // never cancelled
    bool requested() const { return state_ && state_->requested.load(std::memory_order_acquire); }
    // Runs `fn` once when cancelled (at once if it already is). A default token never runs it.
    void on_cancel(std::function<void()> fn) const;

private:
    friend class cancel_source;
    explicit cancel_token(std::shared_ptr<detail::cancel_state> s) : state_(std::move(s)) {}
    std::shared_ptr<detail::cancel_state> state_;
};

class cancel_source {
public:
    cancel_source() : state_(std::make_shared<detail::cancel_state>()) {}
    cancel_token token() const { return cancel_token(state_); }
    void cancel() const;   // idempotent
    bool requested() const { return state_->requested.load(std::memory_order_acquire); }

private:
    std::shared_ptr<detail::cancel_state> state_;
};

}  // namespace hearth::lsp
