// connection: one byte stream speaking LSP, i.e. frame_reader + server + frame_message.
// The transport (daemon) passes every chunk it reads to feed() and writes what the
// write callback gives it; it closes the connection when feed() returns false (a fatal
// framing error, or `exit`). A non-fatal framing error (body over the limit, unknown
// charset) skips that message and answers -32600 with id null.
// Thread-safety: as server: feed() and server() on the connection's thread only; the write
// callback may be called from any thread (responders answering from the compute worker).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lsp/framing.h"
#include "lsp/server.h"

namespace hearth::lsp {

class connection {
public:
    using write_fn = std::function<void(std::string framed_bytes)>;

    connection(handlers h, write_fn write, server_limits limits = {}, framing_limits framing = {});

    // Returns false when the transport must close the connection (see close_reason()).
    bool feed(std::string_view bytes);

    server & protocol() { return server_; }
    bool open() const { return !close_reason_; }
    const std::optional<std::string> & close_reason() const { return close_reason_; }
    // True when no partial message is buffered (for the transport's slow-sender timer).
    bool between_messages() const { return reader_.idle(); }

private:
    frame_reader reader_;
    server server_;
    std::optional<std::string> close_reason_;
    std::vector<frame_item> items_;   // reused between feed() calls
};

}  // namespace hearth::lsp
