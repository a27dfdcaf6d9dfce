#include "daemon/engine/sse_client.h"

#include <algorithm>
#include <memory>
#include <mutex>

#include <curl/curl.h>

namespace hearth::daemon {
namespace {

constexpr size_t k_max_error_body = 2048;       // of a refusal's body, kept for the message
constexpr size_t k_max_event_bytes = 1u << 20;  // one event's data; more is not an answer

std::once_flag g_curl_init;

struct stream_state {
    CURL * easy = nullptr;
    const sse_event_callback * on_event = nullptr;
    long status = 0;
    std::string line;        // the line being received
    std::string data;        // the event being assembled (its data: lines)
    std::string error_body;  // a non-200 answer's start
    size_t n_events = 0;
    bool done = false;       // [DONE], or the reader has all it wants
    bool stopped_by_reader = false;
    bool malformed = false;
    std::string malformed_what;
};

// One complete line of the stream (without its end of line).
void on_line(stream_state & s, std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {   // the end of an event
        if (s.data.empty()) return;
        ++s.n_events;
        if (s.data == "[DONE]") s.done = true;
        else if (!(*s.on_event)(s.data)) s.done = s.stopped_by_reader = true;
        s.data.clear();
        return;
    }
    if (line.front() == ':') return;   // a comment (keep-alive)
    const auto colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "data") {
        if (!s.data.empty()) s.data += '\n';
        s.data += value;
    } else if (field != "event" && field != "id" && field != "retry") {
        s.malformed = true;
        s.malformed_what = "a line that is no SSE field: '" + std::string(line.substr(0, 80)) + "'";
    }
}

size_t on_body(char * ptr, size_t size, size_t n, void * user) {
    auto & s = *static_cast<stream_state *>(user);
    const size_t bytes = size * n;
    if (s.status == 0) curl_easy_getinfo(s.easy, CURLINFO_RESPONSE_CODE, &s.status);
    if (s.status != 200) {
        s.error_body.append(ptr, std::min(bytes, k_max_error_body - std::min(k_max_error_body, s.error_body.size())));
        return bytes;
    }
    for (size_t i = 0; i < bytes && !s.done && !s.malformed; ++i) {
        if (ptr[i] == '\n') {
            on_line(s, s.line);
            s.line.clear();
        } else {
            s.line += ptr[i];
            if (s.line.size() + s.data.size() > k_max_event_bytes) {
                s.malformed = true;
                s.malformed_what = "an event over 1 MiB";
            }
        }
    }
    return (s.done || s.malformed) ? CURL_WRITEFUNC_ERROR : bytes;   // closes the connection
}

struct curl_handles {
    CURL * easy = curl_easy_init();
    CURLM * multi = curl_multi_init();
    curl_slist * headers = nullptr;
    ~curl_handles() {
        if (multi && easy) curl_multi_remove_handle(multi, easy);
        if (easy) curl_easy_cleanup(easy);
        if (multi) curl_multi_cleanup(multi);
        curl_slist_free_all(headers);
    }
};

std::string trimmed_body(std::string b) {
    while (!b.empty() && (b.back() == '\n' || b.back() == '\r' || b.back() == ' ')) b.pop_back();
    return b;
}

}  // namespace

std::string_view sse_failure_name(sse_failure f) {
    switch (f) {
        case sse_failure::none: return "none";
        case sse_failure::unreachable: return "unreachable";
        case sse_failure::refused_key: return "refused_key";
        case sse_failure::http_status: return "http_status";
        case sse_failure::malformed: return "malformed";
        case sse_failure::first_byte_budget: return "over_budget";
        case sse_failure::dropped: return "dropped";
        case sse_failure::cancelled: return "cancelled";
    }
    return "unknown";
}

sse_outcome post_sse(const sse_request & req, std::stop_token stop, const sse_event_callback & on_event) {
    std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    sse_outcome out;
    curl_handles h;
    if (!h.easy || !h.multi) return {sse_failure::unreachable, "libcurl could not start a request"};
    stream_state s;
    s.easy = h.easy;
    s.on_event = &on_event;
    char errbuf[CURL_ERROR_SIZE] = {};
    h.headers = curl_slist_append(h.headers, "Content-Type: application/json");
    h.headers = curl_slist_append(h.headers, "Accept: text/event-stream");
    const std::string auth = "Authorization: Bearer " + req.api_key;
    if (!req.api_key.empty()) h.headers = curl_slist_append(h.headers, auth.c_str());
    curl_easy_setopt(h.easy, CURLOPT_URL, req.url.c_str());
    curl_easy_setopt(h.easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h.easy, CURLOPT_POSTFIELDS, req.body.c_str());
    curl_easy_setopt(h.easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(req.body.size()));
    curl_easy_setopt(h.easy, CURLOPT_HTTPHEADER, h.headers);
    curl_easy_setopt(h.easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h.easy, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(h.easy, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h.easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h.easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h.easy, CURLOPT_USERAGENT, "hearth/" HEARTH_VERSION);
    // No proxy from the environment: the URL the user configured is the one reached.
    curl_easy_setopt(h.easy, CURLOPT_NOPROXY, "*");
    curl_multi_add_handle(h.multi, h.easy);

    // A stop request wakes the poll below at once; the request is then closed.
    CURLM * multi = h.multi;
    std::stop_callback wake(stop, [multi] { curl_multi_wakeup(multi); });

    using clock = std::chrono::steady_clock;
    int running = 1;
    CURLcode done_code = CURLE_OK;
    while (running) {
        if (curl_multi_perform(h.multi, &running) != CURLM_OK) break;
        if (stop.stop_requested()) return {sse_failure::cancelled, "cancelled"};
        const auto now = clock::now();
        if (s.n_events == 0 && s.data.empty() && now >= req.first_event_deadline) {
            return {sse_failure::first_byte_budget,
                    "no answer from " + req.url + " within the time budget (remote-budget-ms)"};
        }
        if (now >= req.end_deadline) {
            out.timed_out = true;
            break;
        }
        if (!running) break;
        const auto until = s.n_events == 0 ? std::min(req.first_event_deadline, req.end_deadline) : req.end_deadline;
        const auto wait_ms = std::clamp<int64_t>(
            std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1, 1, 1000);
        curl_multi_poll(h.multi, nullptr, 0, static_cast<int>(wait_ms), nullptr);
    }
    int n_msgs = 0;
    while (CURLMsg * m = curl_multi_info_read(h.multi, &n_msgs))
        if (m->msg == CURLMSG_DONE) done_code = m->data.result;
    if (s.status == 0) curl_easy_getinfo(h.easy, CURLINFO_RESPONSE_CODE, &s.status);
    out.http_status = static_cast<int>(s.status);
    out.stopped_by_reader = s.stopped_by_reader;
    if (out.timed_out || s.done) return out;
    if (s.malformed) return {sse_failure::malformed, "the answer from " + req.url + " is not the stream expected: " + s.malformed_what};
    if (s.status == 0) {
        const std::string why = errbuf[0] ? errbuf : curl_easy_strerror(done_code);
        return {sse_failure::unreachable, "cannot reach " + req.url + ": " + why};
    }
    if (s.status == 401 || s.status == 403) {
        return {sse_failure::refused_key,
                req.url + " refused the API key (HTTP " + std::to_string(s.status) + "; check remote-key-file): " +
                    trimmed_body(s.error_body),
                static_cast<int>(s.status)};
    }
    if (s.status != 200) {
        return {sse_failure::http_status, req.url + " answered HTTP " + std::to_string(s.status) + ": " + trimmed_body(s.error_body),
                static_cast<int>(s.status)};
    }
    // A last event without the blank line after it still counts.
    if (!s.line.empty()) on_line(s, s.line), s.line.clear();
    if (!s.data.empty()) on_line(s, "");
    if (s.done) return out;
    if (s.malformed) return {sse_failure::malformed, "the answer from " + req.url + " is not the stream expected: " + s.malformed_what};
    if (s.n_events == 0)
        return {sse_failure::malformed, "the answer from " + req.url + " has no server-sent events (is it an OpenAI-compatible engine?)", 200};
    if (done_code != CURLE_OK) {
        const std::string why = errbuf[0] ? errbuf : curl_easy_strerror(done_code);
        return {sse_failure::dropped, "the stream from " + req.url + " broke off: " + why, 200};
    }
    // Ended without [DONE]: what came is the answer (some engines end so), unless the reader
    // expected more, which it decides.
    return out;
}

}  // namespace hearth::daemon
