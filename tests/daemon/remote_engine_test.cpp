// The remote engine's client and fallback without a model server: a loopback port nobody
// listens on, and a listener that accepts and never answers (tests/remote/ has the real
// servers).
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "daemon/engine/fallback_model_service.h"
#include "daemon/engine/sse_client.h"
#include "tests/daemon/scripted_model.h"

using namespace hearth::daemon;
using Catch::Matchers::Contains;
using clock_type = std::chrono::steady_clock;

namespace {

// A loopback TCP listener (the kernel completes the connections; nothing is ever sent).
struct silent_listener {
    int fd = -1;
    int port = 0;
    silent_listener() {
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
        ::listen(fd, 8);
        socklen_t n = sizeof a;
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &n);
        port = ntohs(a.sin_port);
    }
    ~silent_listener() { ::close(fd); }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

// A port that was free a moment ago: connecting to it is refused.
int closed_port() {
    silent_listener l;
    return l.port;
}

double ms_since(clock_type::time_point t0) { return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count(); }

fim_request small_fim() {
    fim_request r;
    r.uri = std::string("file:///a.py");
    r.prefix = std::string("def f():\n    return ");   // std::string: GCC 12's -Wrestrict misfires on a literal here
    r.suffix = std::string("\n");
    return r;
}

}  // namespace

TEST_CASE("sse_client: a refused connection is unreachable, with the URL", "[daemon][remote]") {
    sse_request r;
    r.url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/v1/completions";
    r.body = "{}";
    auto out = post_sse(r, {}, [](std::string_view) { return true; });
    CHECK(out.failure == sse_failure::unreachable);
    CHECK_THAT(out.message, Contains("cannot reach " + r.url));
}

TEST_CASE("sse_client: a stop request closes a waiting request at once", "[daemon][remote]") {
    silent_listener l;
    sse_request r;
    r.url = l.url() + "/v1/completions";
    r.body = "{}";
    std::stop_source stop;
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        stop.request_stop();
    });
    const auto t0 = clock_type::now();
    auto out = post_sse(r, stop.get_token(), [](std::string_view) { return true; });
    const double ms = ms_since(t0);
    canceller.join();
    CHECK(out.failure == sse_failure::cancelled);
    CHECK(ms < 600);   // libcurl's own progress tick is 1 s: the wakeup does not wait for it
}

TEST_CASE("sse_client: no first event within the budget", "[daemon][remote]") {
    silent_listener l;
    sse_request r;
    r.url = l.url() + "/infill";
    r.body = "{}";
    r.first_event_deadline = clock_type::now() + std::chrono::milliseconds(200);
    const auto t0 = clock_type::now();
    auto out = post_sse(r, {}, [](std::string_view) { return true; });
    CHECK(out.failure == sse_failure::first_byte_budget);
    CHECK_THAT(out.message, Contains("within the time budget"));
    CHECK(ms_since(t0) < 1000);
}

TEST_CASE("fallback: an unreachable remote is answered locally, said in status, then not retried for a while",
          "[daemon][remote]") {
    remote_settings rs;
    rs.engine = "remote";
    rs.url = "http://127.0.0.1:" + std::to_string(closed_port());
    rs.api = "llama-server";
    auto local = std::make_unique<hearth::daemon::testing::scripted_model>();
    auto * scripted = local.get();
    auto m = make_remote_engine(rs, std::move(local));
    REQUIRE(m);
    CHECK((*m)->status().engine.kind == "remote");
    auto c = (*m)->complete(small_fim(), {}, {});
    REQUIRE(c);
    REQUIRE(c->candidates.size() == 1);
    CHECK(c->candidates[0].text.rfind("ok0_", 0) == 0);   // the scripted local model's answer
    auto st = (*m)->status().engine;
    CHECK(st.serving == "local");
    CHECK(st.last_failure == "unreachable");
    CHECK_THAT(st.last_error, Contains("cannot reach " + rs.url));
    CHECK(st.fallbacks == 1);
    CHECK(st.remote_answers == 0);
    auto again = (*m)->complete(small_fim(), {}, {});
    REQUIRE(again);
    CHECK((*m)->status().engine.fallbacks == 2);
    CHECK(scripted->n_complete() == 2);
}

TEST_CASE("fallback: without a local model the remote's error is the answer", "[daemon][remote]") {
    remote_settings rs;
    rs.url = "http://127.0.0.1:" + std::to_string(closed_port());
    rs.api = "llama-server";
    auto m = make_remote_engine(rs, nullptr);
    REQUIRE(m);
    auto c = (*m)->complete(small_fim(), {}, {});
    REQUIRE_FALSE(c);
    CHECK_THAT(c.message(), Contains("cannot reach"));
    rs.api = "openai";   // the raw FIM prompt needs the local model's tokens
    auto o = make_remote_engine(rs, nullptr);
    REQUIRE(o);
    auto oc = (*o)->complete(small_fim(), {}, {});
    REQUIRE_FALSE(oc);
    CHECK_THAT(oc.message(), Contains("no local model is loaded"));
}

TEST_CASE("make_remote_engine: the key file must be readable, one non-empty line", "[daemon][remote]") {
    remote_settings rs;
    rs.url = "http://127.0.0.1:1";
    rs.key_file = "/nonexistent/hearth.key";
    auto m = make_remote_engine(rs, nullptr);
    REQUIRE_FALSE(m);
    CHECK_THAT(m.message(), Contains("remote-key-file '/nonexistent/hearth.key': cannot be read"));
}
