// fuzz-links: hearth_lsp
// Feeds bytes through framing + JSON-RPC + the server core (with the transcript tests'
// handlers, so documents, completions, chat streaming and cancellation are all reached).
// Input: byte 0 chooses the mode.
//   bit 0 = 0: raw stream; the rest is fed as is, in chunks of ((byte0 >> 1) + 1) bytes.
//   bit 0 = 1: message list; the rest is split at '\n' and each part framed as a body.
//              bit 1 set: an initialize is sent first, offering the position encoding
//              chosen by bits 2-3 (utf-8, utf-16, utf-32, none), then `initialized`.
// Checks beyond "no crash, no sanitizer report": everything the server sends is a framed,
// valid JSON-RPC object, and `exit` leaves no request in flight and nothing more sent.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <boost/json/parse.hpp>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "lsp/log.h"
#include "tests/lsp/test_harness.h"

namespace {

void check(bool ok, const char * what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz_jsonrpc: invariant broken: %s\n", what);
        std::abort();
    }
}

void check_outgoing(hearth::lsp::testing::harness & h) {
    for (const auto & body : h.take_bodies()) {
        boost::system::error_code ec;
        const boost::json::value v = boost::json::parse(body, ec);
        check(!ec, "server sent invalid JSON");
        check(v.is_object() && v.at("jsonrpc") == "2.0", "server sent a non JSON-RPC 2.0 message");
        const auto & o = v.get_object();
        check(o.contains("method") || (o.contains("id") && (o.contains("result") != o.contains("error"))),
              "server sent a message that is neither a notification nor a response");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    static const bool quiet = [] {
        hearth::lsp::set_logger(std::make_shared<spdlog::logger>("lsp", std::make_shared<spdlog::sinks::null_sink_mt>()));
        return true;
    }();
    (void)quiet;
    if (size == 0) return 0;
    const uint8_t flags = data[0];
    const std::string_view rest(reinterpret_cast<const char *>(data) + 1, size - 1);

    hearth::lsp::server_limits limits;
    limits.max_requests_in_flight = 8;
    limits.documents.max_documents = 8;
    limits.documents.max_document_bytes = 1 << 16;
    hearth::lsp::testing::harness h(limits, hearth::lsp::framing_limits{.max_body_bytes = 1 << 16, .max_header_bytes = 256});

    if ((flags & 1) == 0) {
        const size_t chunk = static_cast<size_t>(flags >> 1) + 1;
        for (size_t pos = 0; pos < rest.size() && h.conn.open(); pos += chunk) {
            h.conn.feed(rest.substr(pos, chunk));
            check_outgoing(h);
        }
    } else {
        if (flags & 2) {
            static const char * encodings[] = {R"(["utf-8"])", R"(["utf-16"])", R"(["utf-32"])", "[]"};
            h.send(std::string(R"({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"capabilities":{"general":{"positionEncodings":)") +
                   encodings[(flags >> 2) & 3] + "}}}}");
            h.send(R"({"jsonrpc":"2.0","method":"initialized","params":{}})");
        }
        size_t pos = 0;
        while (pos <= rest.size() && h.conn.open()) {
            size_t nl = rest.find('\n', pos);
            if (nl == std::string_view::npos) nl = rest.size();
            h.send(rest.substr(pos, nl - pos));
            check_outgoing(h);
            pos = nl + 1;
        }
    }
    h.release_held();
    check_outgoing(h);
    // What is still in flight (a chat waiting for cancellation) is cancelled by `exit`
    // (when the input did not stop in the middle of a message, which would swallow it).
    if (h.conn.open() && h.conn.between_messages()) {
        h.send(R"({"jsonrpc":"2.0","method":"exit"})");
        check(!h.conn.open(), "exit did not close the connection");
        check(h.conn.protocol().requests_in_flight() == 0, "a request outlived exit");
        check(h.take_bodies().empty(), "the server sent something after exit");
    }
    return 0;
}
