#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "lsp/chat_stream.h"
#include "lsp/server.h"

using namespace hearth::lsp;
namespace json = boost::json;

namespace {

// A thread-safe sink of outgoing bodies, as a transport would provide.
struct sink {
    std::mutex mu;
    std::vector<json::value> bodies;
    send_fn fn() {
        return [this](std::string body) {
            std::lock_guard lock(mu);
            bodies.push_back(json::parse(body));
        };
    }
    std::vector<json::value> take() {
        std::lock_guard lock(mu);
        return std::exchange(bodies, {});
    }
};

const char * k_init = R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}})";

std::string status_request(int id) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"hearth/status"})";
}

}  // namespace

TEST_CASE("server: handlers may answer later, from other threads", "[lsp][server]") {
    sink out;
    std::mutex mu;
    std::vector<typed_responder<status_result>> pending;
    handlers h;
    h.on_status = [&](const request_context &, typed_responder<status_result> r) {
        std::lock_guard lock(mu);
        pending.push_back(std::move(r));
    };
    server s(h, out.fn(), server_limits{.max_requests_in_flight = 1000});
    s.handle_body(k_init);
    REQUIRE(out.take().size() == 1);

    const int n = 400;
    for (int i = 1; i <= n; ++i) s.handle_body(status_request(i));
    CHECK(s.requests_in_flight() == n);
    CHECK(out.take().empty());

    // Four workers answer concurrently, and each also tries a second answer that must be dropped.
    // (Catch2's assertions are not thread-safe: the workers only count.)
    std::atomic<int> first_answers_refused{0};
    std::atomic<int> second_answers_sent{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < 4; ++w) {
        workers.emplace_back([&, w] {
            for (int i = w; i < n; i += 4) {
                typed_responder<status_result> r;
                {
                    std::lock_guard lock(mu);
                    r = pending[static_cast<size_t>(i)];
                }
                status_result st;
                st.queueDepth = static_cast<uint32_t>(i);
                if (!r.reply(st)) ++first_answers_refused;
#ifdef NDEBUG   // in a debug build a second answer asserts
                if (r.reply(st)) ++second_answers_sent;
#endif
            }
        });
    }
    for (auto & t : workers) t.join();
    CHECK(first_answers_refused == 0);
    CHECK(second_answers_sent == 0);
    CHECK(s.requests_in_flight() == 0);
    const auto bodies = out.take();
    REQUIRE(bodies.size() == static_cast<size_t>(n));
    std::map<int64_t, int> answers;
    for (const auto & b : bodies) {
        const int64_t id = b.at("id").as_int64();
        ++answers[id];
        CHECK(b.at("result").at("queueDepth").as_int64() == id - 1);
    }
    CHECK(answers.size() == static_cast<size_t>(n));
    pending.clear();
    CHECK(out.take().empty());   // answered responders send nothing when destroyed
}

TEST_CASE("server: a request dropped unanswered still gets -32603", "[lsp][server]") {
    sink out;
    handlers h;
    h.on_status = [](const request_context &, typed_responder<status_result>) {};   // forgets it
    server s(h, out.fn());
    s.handle_body(k_init);
    out.take();
    s.handle_body(status_request(5));
    const auto bodies = out.take();
    REQUIRE(bodies.size() == 1);
    CHECK(bodies[0].at("id") == 5);
    CHECK(bodies[0].at("error").at("code") == -32603);
    CHECK_THAT(std::string(bodies[0].at("error").at("message").as_string()), Catch::Contains("without a reply"));
    CHECK(s.requests_in_flight() == 0);
}

TEST_CASE("server: a handler that throws gets -32603, the server lives on", "[lsp][server]") {
    sink out;
    handlers h;
    h.on_status = [](const request_context &, typed_responder<status_result>) { throw std::runtime_error("boom"); };
    server s(h, out.fn());
    s.handle_body(k_init);
    out.take();
    s.handle_body(status_request(1));
    auto bodies = out.take();
    REQUIRE(bodies.size() == 1);
    CHECK(bodies[0].at("error").at("code") == -32603);
    CHECK_THAT(std::string(bodies[0].at("error").at("message").as_string()), Catch::Contains("boom"));
    s.handle_body(status_request(2));
    CHECK(out.take().size() == 1);
}

TEST_CASE("server: answers after the server is gone are dropped, work is cancelled", "[lsp][server]") {
    sink out;
    typed_responder<status_result> kept;
    cancel_token token;
    handlers h;
    h.on_status = [&](const request_context & ctx, typed_responder<status_result> r) {
        kept = r;
        token = ctx.cancel;
    };
    {
        server s(h, out.fn());
        s.handle_body(k_init);
        s.handle_body(status_request(1));
        CHECK(!token.requested());
    }
    CHECK(token.requested());
    out.take();
    bool first = false;
    std::thread worker([&] { first = kept.reply(status_result{}); });   // the first answer, but nowhere to go
    worker.join();
    CHECK(first);
    CHECK(out.take().empty());
}

TEST_CASE("server: cancellation callbacks run once; a cancelled handler answers -32800", "[lsp][server]") {
    sink out;
    std::atomic<int> callbacks{0};
    handlers h;
    h.on_status = [&](const request_context & ctx, typed_responder<status_result> r) {
        ctx.cancel.on_cancel([&, r] {
            ++callbacks;
            r.cancelled();
        });
    };
    server s(h, out.fn());
    s.handle_body(k_init);
    out.take();
    s.handle_body(status_request(3));
    s.handle_body(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}})");
    s.handle_body(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}})");
    CHECK(callbacks == 1);
    auto bodies = out.take();
    REQUIRE(bodies.size() == 1);
    CHECK(bodies[0].at("error").at("code") == -32800);

    cancel_source src;
    int runs = 0;
    src.token().on_cancel([&] { ++runs; });
    src.cancel();
    src.cancel();
    src.token().on_cancel([&] { ++runs; });   // already cancelled: runs at once
    CHECK(runs == 2);
    cancel_token never;
    never.on_cancel([&] { ++runs; });
    CHECK(!never.requested());
    CHECK(runs == 2);
}

TEST_CASE("server: a missing handler means method not found", "[lsp][server]") {
    sink out;
    server s(handlers{}, out.fn());
    s.handle_body(k_init);
    out.take();
    s.handle_body(status_request(1));
    s.handle_body(R"({"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"hearth.explain",
        "arguments":[{"textDocument":{"uri":"u"},"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}}]}})");
    const auto bodies = out.take();
    REQUIRE(bodies.size() == 2);
    CHECK(bodies[0].at("error").at("code") == -32601);
    CHECK(bodies[1].at("error").at("code") == -32601);
}

TEST_CASE("server: position encoding negotiation", "[lsp][server]") {
    CHECK(negotiate_position_encoding({}) == position_encoding::utf16);
    CHECK(negotiate_position_encoding({"utf-8"}) == position_encoding::utf8);
    CHECK(negotiate_position_encoding({"utf-32", "utf-8"}) == position_encoding::utf32);
    CHECK(negotiate_position_encoding({"latin1", "utf-8"}) == position_encoding::utf8);
    CHECK(negotiate_position_encoding({"latin1"}) == position_encoding::utf16);

    sink out;
    server s(handlers{}, out.fn());
    s.handle_body(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"general":{"positionEncodings":["utf-32"]}}}})");
    CHECK(s.documents().encoding() == position_encoding::utf32);
    CHECK(out.take()[0].at("result").at("capabilities").at("positionEncoding") == "utf-32");
}

TEST_CASE("chat_stream: nothing is streamed without tokens", "[lsp][server]") {
    sink out;
    auto ch = std::make_shared<outgoing_channel>(out.fn());
    chat_params p;
    chat_stream quiet(notifier(ch), p);
    quiet.begin();
    quiet.piece("a");
    quiet.piece("");
    quiet.end();
    CHECK(quiet.text() == "a");
    CHECK(out.take().empty());

    p.partialResultToken = json::value("t");
    chat_stream loud(notifier(ch), p);
    loud.piece("x");
    ch->close();
    loud.piece("y");   // after close: dropped
    const auto bodies = out.take();
    REQUIRE(bodies.size() == 1);
    CHECK(bodies[0] == json::parse(R"({"jsonrpc":"2.0","method":"$/progress","params":{"token":"t","value":{"text":"x"}}})"));
    CHECK(!notifier(ch).log_message(message_type::info, "late"));
}

TEST_CASE("responder: try_* answer only the first time, quietly", "[lsp][server]") {
    sink out;
    auto ch = std::make_shared<outgoing_channel>(out.fn());
    int done = 0;
    responder r(request_id(9), "hearth/chat", ch, [&](const request_id &) { ++done; });
    responder copy = r;
    std::thread worker([&] { copy.try_reply(json::value{{"text", "late"}}); });
    const bool cancelled_first = r.try_cancelled();
    worker.join();
    CHECK(r.answered());
    CHECK(!r.try_cancelled());
    CHECK(!copy.try_reply(nullptr));
    CHECK(done == 1);
    const auto bodies = out.take();
    REQUIRE(bodies.size() == 1);
    CHECK(bodies[0].at("id") == 9);
    CHECK(bodies[0].as_object().contains(cancelled_first ? "error" : "result"));
}
