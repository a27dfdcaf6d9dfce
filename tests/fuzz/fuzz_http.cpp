// fuzz-links: hearth_daemon_http
// Feeds bytes through the HTTP API's request path as the daemon runs it: Beast's request
// parser with the transport's limits, header first (daemon/http/http_request_parser.h): the
// header alone, check_header's verdict on it (the guard: Host, Origin, bearer token; the route;
// Expect; Content-Length), then the body, then the endpoints themselves over the scripted model,
// the real scheduler and the real completion pipeline. Input: byte 0 is the chunk size the rest
// is fed in ((byte0 & 63) + 1 bytes); several requests may follow one another on a connection,
// which ends, as the transport's does, at a parse error or a refusal.
// Checks beyond "no crash, no sanitizer report": every refusal has one of the statuses the
// transport answers and a JSON body; `100 Continue` is sent only to an HTTP/1.1 client that
// asked for it and has a body to send; a body is never over the limit; every request the
// header check lets through is answered exactly once, within seconds, with a status from 200
// to 599 and JSON (or events of JSON) where JSON is said.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json/parse.hpp>
#include <spdlog/spdlog.h>

#include "daemon/http/http_api.h"
#include "daemon/http/http_guard.h"
#include "daemon/http/http_request_parser.h"
#include "tests/daemon/scripted_model.h"

namespace {

namespace http = boost::beast::http;
using namespace hearth::daemon;

void check(bool ok, const char * what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz_http: invariant broken: %s\n", what);
        std::abort();
    }
}

bool is_json(std::string_view s) {
    boost::system::error_code ec;
    (void)boost::json::parse(s, ec);
    return !ec;
}

// Collects one request's answer and says when it is complete.
class recorder final : public http_reply {
public:
    void respond(http_response r) override {
        std::lock_guard lock(mu_);
        check(!answered_ && !streaming_, "a request was answered twice");
        check(r.status >= 200 && r.status < 600, "a status outside 200..599");
        if (r.content_type == "application/json") check(is_json(r.body), "a JSON response that is not JSON");
        answered_ = true;
        cv_.notify_all();
    }
    void begin_events() override {
        std::lock_guard lock(mu_);
        check(!answered_ && !streaming_, "events after an answer");
        streaming_ = true;
    }
    bool event(std::string data) override {
        std::lock_guard lock(mu_);
        check(streaming_ && !answered_, "an event outside a stream");
        check(data == "[DONE]" || is_json(data), "an event that is not JSON");
        return true;
    }
    void end_events() override {
        std::lock_guard lock(mu_);
        check(streaming_ && !answered_, "a stream ended twice");
        answered_ = true;
        cv_.notify_all();
    }
    bool wait() {
        std::unique_lock lock(mu_);
        return cv_.wait_for(lock, std::chrono::seconds(10), [this] { return answered_; });
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    bool answered_ = false, streaming_ = false;
};

// As Beast's reads do: bytes arrive in chunks, and what the parser did not use is offered again
// with more. header_only: as async_read_header (not eager: it stops at the header's end).
boost::beast::error_code feed(request_parser & p, std::string_view & rest, size_t chunk, bool header_only) {
    p.eager(!header_only);
    boost::beast::error_code ec;
    size_t offered = chunk;
    while (!rest.empty() && !(header_only ? p.is_header_done() : p.is_done())) {
        const size_t n = std::min(offered, rest.size());
        const size_t used = p.put(boost::asio::buffer(rest.data(), n), ec);
        if (ec == http::error::need_more) ec = {};
        if (ec) break;
        rest.remove_prefix(used);
        if (used > 0) offered = chunk;
        else if (n == rest.size()) break;   // the parser needs more than there is
        else offered += chunk;
    }
    return ec;
}

struct api_under_test {
    hearth::daemon::testing::scripted_model model;
    std::shared_ptr<scheduler> sched = std::make_shared<scheduler>();
    daemon_config cfg;
    completion_pipeline pipeline{&model, cfg.completion};
    http_api api{sched, &model, &pipeline, cfg};
    api_under_test() { model.per_token = std::chrono::milliseconds(0); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    static api_under_test * t = [] {
        spdlog::set_level(spdlog::level::off);
        return new api_under_test;   // lives for the process: its worker serves every input
    }();
    if (size == 0) return 0;
    const size_t chunk = static_cast<size_t>(data[0] & 63) + 1;
    std::string_view rest(reinterpret_cast<const char *>(data) + 1, size - 1);
    const token_check token_ok = [](std::string_view p) { return p == "fuzz-token"; };
    for (int n_requests = 0; !rest.empty() && n_requests < 8; ++n_requests) {
        request_parser parser;
        configure_request_parser(parser, 1024);
        boost::beast::error_code ec = feed(parser, rest, chunk, /*header_only=*/true);
        if (!ec && !parser.is_header_done()) return 0;   // the client never finished its header
        if (!ec) {
            const header_verdict v = check_header(parser, token_ok, 4096);
            if (v.refusal) {
                const unsigned s = v.refusal->status;
                check(s == 400 || s == 401 || s == 403 || s == 404 || s == 405 || s == 413 || s == 417, "a refusal with an odd status");
                check(is_json(error_response(s, v.refusal->message).body), "a refusal's body that is not JSON");
                return 0;   // the transport answers and closes: the body is never read
            }
            const auto & h = parser.get();
            check(!v.send_continue || (h.version() == 11 && h.find(http::field::expect) != h.end() && !parser.is_done()),
                  "100 Continue for a client that did not wait for it");
            ec = feed(parser, rest, chunk, /*header_only=*/false);
        }
        if (ec) {
            const auto [status, why] = parse_error_status(ec);
            check(status == 400 || status == 413 || status == 431, "a parse error without its status");
            check(is_json(error_response(status, why).body), "a parse error's body that is not JSON");
            return 0;
        }
        if (!parser.is_done()) return 0;
        http::request<http::string_body> req = parser.release();
        check(req.body().size() <= 4096, "a body over the limit was read");
        http_request r;
        r.method = std::string(req.method_string());
        r.path = std::string(target_path(req.target()));
        r.body = std::move(req.body());
        r.owner = 1;
        auto rec = std::make_shared<recorder>();
        t->api.handle(r, rec);
        check(rec->wait(), "a request was not answered within 10 s");
    }
    return 0;
}
