// sse_client: one HTTP POST whose answer streams back as server-sent events (the
// OpenAI-compatible engines' `stream: true`), for the remote engine (remote_model_service.h).
// libcurl does the HTTP (and https, through Debian's OpenSSL build of it) because it is the
// well-kept client the daemon already links for `hearth pull`; its multi interface lets a
// stop request or a deadline close the connection at once (curl_multi_wakeup), which is how
// the remote learns that the editor cancelled.
// Thread-safety: post_sse() is reentrant; each call owns its connection.
#pragma once

#include <chrono>
#include <functional>
#include <stop_token>
#include <string>
#include <string_view>

#include "base/result.h"

namespace hearth::daemon {

// Why a request produced no (complete) answer; the fallback decides on it.
enum class sse_failure {
    none,
    unreachable,    // no connection (refused, no route, DNS, TLS)
    refused_key,    // HTTP 401 or 403: the API key is wrong or missing
    http_status,    // any other status than 200
    malformed,      // not an SSE stream, or an event that is not the JSON expected
    first_byte_budget,  // no event before the first-event deadline
    dropped,        // the connection ended before the stream's end
    cancelled,      // the stop token was requested (not an error)
};
std::string_view sse_failure_name(sse_failure f);

struct sse_request {
    std::string url;                 // http:// or https://
    std::string body;                // JSON
    std::string api_key;             // "": no Authorization header
    // No first event by then: the request is closed (sse_failure::first_byte_budget).
    std::chrono::steady_clock::time_point first_event_deadline = std::chrono::steady_clock::time_point::max();
    // The whole answer by then: the request is closed and what came stays (ok, timed_out).
    std::chrono::steady_clock::time_point end_deadline = std::chrono::steady_clock::time_point::max();
};

struct sse_outcome {
    sse_failure failure = sse_failure::none;
    std::string message;             // what went wrong, with the URL ("" when none)
    int http_status = 0;
    bool timed_out = false;          // end_deadline closed an answer that was streaming
    bool stopped_by_reader = false;  // on_event returned false
};

// Returns false to close the stream (the answer is complete for the reader).
using sse_event_callback = std::function<bool(std::string_view data)>;

// Posts the request and calls on_event with each event's data ("[DONE]" ends the stream and
// is not passed on). Never throws.
sse_outcome post_sse(const sse_request & req, std::stop_token stop, const sse_event_callback & on_event);

}  // namespace hearth::daemon
