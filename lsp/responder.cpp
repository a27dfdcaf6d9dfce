#include "lsp/responder.h"

#include <cassert>

#include "lsp/log.h"

namespace hearth::lsp {

namespace detail {
responder_state::~responder_state() {
    if (answered.load(std::memory_order_acquire) || !channel) return;
    // A handler dropped the request: a bug, but the client must not wait forever.
    logger().error("request {} ({}) was dropped without a reply; answering -32603", id.to_string(), method);
    if (on_done) on_done(id);
    channel->send(error_body(id, rpc_error{errc::internal_error, method + ": the server dropped this request without a reply"}));
}
}  // namespace detail

responder::responder(request_id id, std::string method, std::shared_ptr<outgoing_channel> channel,
                     std::function<void(const request_id &)> on_done)
    : state_(std::make_shared<detail::responder_state>()) {
    state_->id = std::move(id);
    state_->method = std::move(method);
    state_->channel = std::move(channel);
    state_->on_done = std::move(on_done);
}

bool responder::finish(std::string body, bool quiet) const {
    if (!state_) return false;
    if (state_->answered.exchange(true, std::memory_order_acq_rel)) {
        if (quiet) return false;
        logger().error("request {} ({}) answered twice; second answer dropped", state_->id.to_string(), state_->method);
        assert(!"request answered twice");
        return false;
    }
    // Free the in-flight slot before the client can see the answer and send the next request.
    if (state_->on_done) state_->on_done(state_->id);
    if (state_->channel) state_->channel->send(std::move(body));
    return true;
}

bool responder::reply(const boost::json::value & result) const {
    if (!state_) return false;
    return finish(result_body(state_->id, result), false);
}

bool responder::try_reply(const boost::json::value & result) const {
    if (!state_ || answered()) return false;
    return finish(result_body(state_->id, result), true);
}

bool responder::try_fail(const rpc_error & error) const {
    if (!state_ || answered()) return false;
    return finish(error_body(state_->id, error), true);
}

bool responder::fail(const rpc_error & error) const {
    if (!state_) return false;
    return finish(error_body(state_->id, error), false);
}

bool responder::answered() const {
    return state_ && state_->answered.load(std::memory_order_acquire);
}

const request_id & responder::id() const {
    static const request_id null_id;
    return state_ ? state_->id : null_id;
}

}  // namespace hearth::lsp
