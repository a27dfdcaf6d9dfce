// responder: the reply-once handle of one request. The server creates one per request it
// dispatches; the handler (or whoever it hands it to) answers exactly once with a result or
// an error. Copies share one state. A second answer is a bug: it asserts in debug builds,
// and in release is logged and dropped. If every copy is destroyed unanswered, the last
// one logs the bug and answers -32603 so that the client is never left waiting.
// Answering removes the request from the server's in-flight table (freeing its slot in the
// per-connection limit) and makes a later $/cancelRequest for its id a no-op.
// try_reply/try_fail are for paths that legitimately race (see below).
// typed_responder<T> is the same handle that only accepts the result type of its method.
// Thread-safety: reply/fail may be called from any thread (e.g. the compute worker);
// the body is sent through the connection's outgoing_channel.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>

#include "lsp/jsonrpc.h"
#include "lsp/outgoing.h"

namespace hearth::lsp {

namespace detail {
struct responder_state {
    request_id id;
    std::string method;
    std::shared_ptr<outgoing_channel> channel;
    std::function<void(const request_id &)> on_done;   // removes the in-flight entry
    std::atomic<bool> answered{false};
    ~responder_state();
};
}  // namespace detail

class responder {
public:
    responder() = default;   // detached: answers go nowhere (tests of handlers)
    responder(request_id id, std::string method, std::shared_ptr<outgoing_channel> channel,
              std::function<void(const request_id &)> on_done);

    // Each returns false, sending nothing, when the request was already answered.
    bool reply(const boost::json::value & result) const;
    bool fail(const rpc_error & error) const;
    bool fail(errc code, std::string message) const { return fail(rpc_error{code, std::move(message)}); }
    bool cancelled() const { return fail(errc::request_cancelled, "request cancelled"); }
    // For two paths that may race to answer (a cancel callback and the worker finishing):
    // answer only if nobody has, without the answered-twice diagnostics.
    bool try_reply(const boost::json::value & result) const;
    bool try_fail(const rpc_error & error) const;
    bool try_cancelled() const { return try_fail(rpc_error{errc::request_cancelled, "request cancelled"}); }

    bool answered() const;
    const request_id & id() const;

private:
    bool finish(std::string body, bool quiet) const;
    std::shared_ptr<detail::responder_state> state_;
};

template <class Result>
class typed_responder {
public:
    typed_responder() = default;
    explicit typed_responder(responder r) : r_(std::move(r)) {}
    bool reply(const Result & result) const { return r_.reply(boost::json::value_from(result)); }
    bool fail(const rpc_error & error) const { return r_.fail(error); }
    bool fail(errc code, std::string message) const { return r_.fail(code, std::move(message)); }
    bool cancelled() const { return r_.cancelled(); }
    bool try_reply(const Result & result) const { return r_.try_reply(boost::json::value_from(result)); }
    bool try_fail(const rpc_error & error) const { return r_.try_fail(error); }
    bool try_cancelled() const { return r_.try_cancelled(); }
    bool answered() const { return r_.answered(); }
    const request_id & id() const { return r_.id(); }
    const responder & untyped() const { return r_; }

private:
    responder r_;
};

}  // namespace hearth::lsp
