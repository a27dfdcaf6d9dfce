// JSON-RPC 2.0 messages: parsing one framed body into a request, a notification or a
// response, and writing replies. Bodies are parsed with Boost.JSON under a nesting limit
// (a deeply nested body is refused, not recursed into).
// Batches (a top-level array) are refused with -32600: the LSP never sends them, and
// answering them would need a response array assembled from async handlers; see
// docs/protocol.md.
// Our errors are an errc; jsonrpc_code() is the one place that maps them to wire codes.
// Thread-safety: free functions and value types only.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <boost/json/value.hpp>

namespace hearth::lsp {

// A request id as LSP allows it (integer or string); null only in replies to messages
// whose id could not be read.
class request_id {
public:
    request_id() = default;                              // null
    request_id(int64_t n) : v_(n) {}
    request_id(std::string s) : v_(std::move(s)) {}
    bool is_null() const { return v_.index() == 0; }
    boost::json::value to_json() const;
    std::string to_string() const;                       // 7, "abc", null: for logs and keys
    bool operator==(const request_id &) const = default;
    auto operator<=>(const request_id &) const = default;

private:
    std::variant<std::monostate, int64_t, std::string> v_;
};

enum class errc {
    parse_error,          // body is not JSON (or nests too deep)
    invalid_request,      // JSON but not a JSON-RPC 2.0 message; also: a batch
    method_not_found,     // a request for a method we do not serve
    invalid_params,       // params missing or of the wrong shape; message names the field
    internal_error,       // a bug or a failure with no better code
    server_not_initialized,  // a request before `initialize`
    shutting_down,        // a request after `shutdown` (JSON-RPC's invalid request)
    request_cancelled,    // the client cancelled it ($/cancelRequest)
    content_modified,     // the document changed under the request
    request_failed,       // the request was valid but could not be served (e.g. the model failed)
    server_busy,          // too many requests in flight or queued
};

// The single mapping from our error kinds to JSON-RPC / LSP error codes.
int jsonrpc_code(errc e);

struct rpc_error {
    errc code;
    std::string message;
};

struct request {
    request_id id;
    std::string method;
    boost::json::value params;   // object, array, or null when absent
};

struct notification {
    std::string method;
    boost::json::value params;
};

// A reply from the client to a request the server sent (we send none yet; logged, dropped).
struct response {
    request_id id;
    boost::json::value result;                 // null if error is set
    std::optional<boost::json::value> error;
};

// A body that could not be read as a message: the error reply to send (id null unless the
// id itself could be read).
struct invalid_message {
    request_id id;
    rpc_error error;
};

using message = std::variant<request, notification, response, invalid_message>;

struct parse_limits {
    unsigned max_depth = 64;   // JSON nesting depth; LSP params nest far less
};

// Never throws; every malformed body becomes an invalid_message.
message parse_message(std::string_view body, const parse_limits & limits = {});

// Serialized bodies (not framed).
std::string result_body(const request_id & id, const boost::json::value & result);
std::string error_body(const request_id & id, const rpc_error & error);
std::string notification_body(std::string_view method, const boost::json::value & params);

}  // namespace hearth::lsp
