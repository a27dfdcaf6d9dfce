#include "daemon/server/session.h"

#include <atomic>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "lsp/framing.h"

namespace hearth::daemon {

namespace asio = boost::asio;

namespace {
std::atomic<uint64_t> next_session_id{1};
}

std::string refusal_message(std::string_view why) {
    const boost::json::object msg{{"jsonrpc", "2.0"},
                                  {"method", "window/showMessage"},
                                  {"params", {{"type", 1}, {"message", "the hearth daemon refused this connection: " + std::string(why)}}}};
    return lsp::frame_message(boost::json::serialize(msg));
}

session::session(asio::io_context & io, std::unique_ptr<byte_stream> stream, session_options opts,
                 handlers_factory make_handlers, closed_fn on_closed)
    : io_(io),
      strand_(asio::make_strand(io)),
      stream_(std::move(stream)),
      opts_(std::move(opts)),
      make_handlers_(std::move(make_handlers)),
      on_closed_(std::move(on_closed)),
      id_(next_session_id++),
      peer_(stream_->describe()),
      deadline_(strand_),
      flush_timer_(strand_) {}

session::~session() = default;

void session::start() {
    asio::dispatch(strand_, [self = shared_from_this()] {
        spdlog::info("session {}: connected ({})", self->id_, self->peer_);
        if (self->opts_.auth_token) {
            self->gate_.emplace(*self->opts_.auth_token);
            // Counted from the connect, not from the first byte: an idle connection that never
            // authenticates is gone after auth_timeout.
            self->arm_deadline(self->opts_.auth_timeout, "did not authenticate");
        } else {
            self->start_protocol();
        }
        self->do_read();
    });
}

void session::start_protocol() {
    std::weak_ptr<session> weak = shared_from_this();
    conn_ = std::make_unique<lsp::connection>(
        make_handlers_(*this),
        [weak](std::string framed) {
            if (auto s = weak.lock())
                asio::post(s->strand_, [s, framed = std::move(framed)]() mutable { s->write_framed(std::move(framed)); });
        },
        opts_.server_limits, opts_.framing_limits);
}

void session::do_read() {
    stream_->async_read_some(asio::buffer(read_buf_), [self = shared_from_this()](boost::system::error_code ec, size_t n) {
        asio::dispatch(self->strand_, [self, ec, n] { self->on_read(ec, n); });
    });
}

void session::on_read(boost::system::error_code ec, size_t n) {
    if (finished_ || closing_) return;
    if (ec) {
        if (ec != asio::error::eof && ec != asio::error::operation_aborted)
            spdlog::info("session {}: read: {}", id_, ec.message());
        close(ec == asio::error::eof ? "client closed the connection" : ec.message(), false);
        return;
    }
    const std::string_view bytes(read_buf_.data(), n);
    if (gate_) {
        const auto st = gate_->feed(bytes);
        if (st == auth_gate::state::need_more) {
            do_read();
            return;
        }
        if (st == auth_gate::state::rejected) {
            spdlog::warn("session {}: refused ({}): {}", id_, peer_, gate_->reason());
            close(gate_->reason(), false);
            return;
        }
        deadline_.cancel();
        deadline_armed_ = false;
        const std::optional<std::string> reply_id = gate_->reply_id_json();
        const std::string rest = gate_->leftover();
        gate_.reset();
        if (opts_.admit_after_auth) {
            if (auto why = opts_.admit_after_auth(*this)) {
                spdlog::warn("session {}: refused after authenticating: {}", id_, *why);
                if (reply_id)
                    write_framed(lsp::frame_message(R"({"jsonrpc":"2.0","id":)" + *reply_id +
                                                    R"(,"error":{"code":-32000,"message":)" +
                                                    boost::json::serialize(boost::json::value(*why)) + "}}"));
                write_framed(refusal_message(*why));
                close(*why, true);
                return;
            }
        }
        if (reply_id) write_framed(lsp::frame_message(R"({"jsonrpc":"2.0","id":)" + *reply_id + R"(,"result":null})"));
        start_protocol();
        spdlog::info("session {}: authenticated", id_);
        if (!rest.empty()) feed_protocol(rest);
    } else {
        feed_protocol(bytes);
    }
    if (!closing_ && !finished_) do_read();
}

void session::feed_protocol(std::string_view bytes) {
    const bool keep = conn_->feed(bytes);
    if (!keep) {
        exit_code_ = conn_->protocol().exit_code();
        const std::string why = conn_->close_reason().value_or("closed");
        // `exit` is orderly: flush what was answered before it. A framing error is not: the
        // peer is not speaking LSP, so nothing more is owed to it.
        close(why, why == "exit");
        return;
    }
    if (conn_->between_messages()) {
        if (deadline_armed_) {
            deadline_.cancel();
            deadline_armed_ = false;
        }
    } else if (!deadline_armed_) {
        arm_deadline(opts_.partial_message_timeout, "a message stayed incomplete");
    }
}

void session::arm_deadline(std::chrono::milliseconds after, const char * what) {
    deadline_armed_ = true;
    deadline_.expires_after(after);
    deadline_.async_wait([weak = weak_from_this(), after, what](boost::system::error_code ec) {
        auto self = weak.lock();
        if (!self || ec || !self->deadline_armed_) return;
        spdlog::warn("session {}: {} within {} ms; disconnecting", self->id_, what, after.count());
        self->close(std::string(what) + " in time", false);
    });
}

void session::write_framed(std::string bytes) {
    if (finished_) return;
    out_bytes_ += bytes.size();
    out_.push_back(std::move(bytes));
    if (out_bytes_ > opts_.max_write_buffer_bytes) {
        spdlog::warn("session {}: client is not reading ({} bytes unsent); disconnecting", id_, out_bytes_);
        out_.clear();
        out_bytes_ = 0;
        close("client not reading", false);
        return;
    }
    if (!writing_) do_write();
}

void session::do_write() {
    if (out_.empty() || finished_) {
        writing_ = false;
        if (closing_ && !finished_) finish();
        return;
    }
    writing_ = true;
    stream_->async_write_all(asio::buffer(out_.front()), [self = shared_from_this()](boost::system::error_code ec, size_t) {
        asio::dispatch(self->strand_, [self, ec] {
            if (self->finished_) return;
            self->out_bytes_ -= self->out_.front().size();
            self->out_.pop_front();
            if (ec) {
                self->writing_ = false;
                self->out_.clear();
                self->out_bytes_ = 0;
                self->close("write: " + ec.message(), false);
                return;
            }
            self->do_write();
        });
    });
}

void session::close(std::string reason, bool graceful) {
    // Graceful: posted, so the replies the protocol posted before this (the answers to
    // `initialize` ... `shutdown` that arrived in the same read as `exit`) are queued first.
    auto run = [self = shared_from_this(), reason = std::move(reason), graceful] {
        if (self->finished_) return;
        if (!self->closing_) spdlog::info("session {}: closing: {}", self->id_, reason);
        self->closing_ = true;
        self->deadline_armed_ = false;
        self->deadline_.cancel();
        if (graceful && (self->writing_ || !self->out_.empty())) {
            // Flush, but not forever: a client that stopped reading is cut off.
            self->flush_timer_.expires_after(self->opts_.partial_message_timeout);
            self->flush_timer_.async_wait([weak = self->weak_from_this()](boost::system::error_code ec) {
                if (auto s = weak.lock(); s && !ec) s->finish();
            });
            return;
        }
        self->finish();
    };
    if (graceful) asio::post(strand_, std::move(run));
    else asio::dispatch(strand_, std::move(run));
}

void session::finish() {
    if (finished_) return;
    finished_ = true;
    closing_ = true;
    deadline_.cancel();
    flush_timer_.cancel();
    if (conn_) {
        exit_code_ = conn_->protocol().exit_code();
        // Destroying the protocol server cancels every request still in flight (their
        // cancel tokens flip, the scheduler drops or stops their jobs) and closes the
        // outgoing channel, so nothing is sent to a closed stream.
        conn_.reset();
    }
    stream_->close();
    out_.clear();
    out_bytes_ = 0;
    spdlog::info("session {}: closed", id_);
    if (on_closed_) on_closed_(*this, exit_code_);
}

}  // namespace hearth::daemon
