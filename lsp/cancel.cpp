#include "lsp/cancel.h"

namespace hearth::lsp {

void cancel_token::on_cancel(std::function<void()> fn) const {
    if (!state_ || !fn) return;
    {
        std::lock_guard lock(state_->mu);
        if (!state_->requested.load(std::memory_order_acquire)) {
            state_->callbacks.push_back(std::move(fn));
            return;
        }
    }
    fn();   // already cancelled: run now, outside the lock
}

void cancel_source::cancel() const {
    std::vector<std::function<void()>> callbacks;
    {
        std::lock_guard lock(state_->mu);
        if (state_->requested.exchange(true, std::memory_order_acq_rel)) return;
        callbacks.swap(state_->callbacks);
    }
    // Outside the lock: a callback may answer the request, which touches other locks.
    for (auto & fn : callbacks) fn();
}

}  // namespace hearth::lsp
