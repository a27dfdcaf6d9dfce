#include "lsp/connection.h"

#include "lsp/log.h"

namespace hearth::lsp {

connection::connection(handlers h, write_fn write, server_limits limits, framing_limits framing)
    : reader_(framing),
      server_(std::move(h), [write = std::move(write)](std::string body) { write(frame_message(body)); }, limits) {}

bool connection::feed(std::string_view bytes) {
    if (close_reason_) return false;
    items_.clear();
    reader_.feed(bytes, items_);
    for (auto & item : items_) {
        if (auto * body = std::get_if<std::string>(&item)) {
            server_.handle_body(*body);
            if (server_.exit_requested()) {
                close_reason_ = "exit";
                break;
            }
        } else {
            const auto & err = std::get<framing_error>(item);
            if (err.fatal()) {
                logger().warn("closing connection: {}", err.message);
                close_reason_ = err.message;
                break;
            }
            logger().warn("{}", err.message);
            server_.reject_unreadable(err.message);
        }
    }
    items_.clear();
    return !close_reason_;
}

}  // namespace hearth::lsp
