// The daemon server in-process with the scripted model double, driven through its real
// transports (Unix socket and loopback TCP) with raw JSON-RPC.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "daemon/server/auth.h"
#include "daemon/server/daemon_server.h"
#include "tests/daemon/running_daemon.h"
#include "tests/daemon/scripted_model.h"
#include "tests/daemon/test_client.h"

using namespace hearth::daemon;
using namespace hearth::daemon::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

void open_doc(test_client & c, const std::string & uri, const std::string & text, const std::string & lang = "cpp") {
    { const bool sent_ = static_cast<bool>(c.notify("textDocument/didOpen",
                     {{"textDocument", {{"uri", uri}, {"languageId", lang}, {"version", 1}, {"text", text}}}})); REQUIRE(sent_); }
}

json::object completion_params(const std::string & uri, int line, int ch, int trigger = 1) {
    return {{"textDocument", {{"uri", uri}}},
            {"position", {{"line", line}, {"character", ch}}},
            {"context", {{"triggerKind", trigger}}}};
}

json::object chat_params(const std::string & uri, const std::string & prompt, json::value token = nullptr) {
    json::object p{{"textDocument", {{"uri", uri}}},
                   {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 1}, {"character", 0}}}}},
                   {"prompt", prompt}};
    if (!token.is_null()) p["partialResultToken"] = token;
    return p;
}

}  // namespace

TEST_CASE("daemon: socket and runtime directory are private", "[daemon][transport]") {
    running_daemon d;
    struct stat st {};
    REQUIRE(::stat(d.server->socket_path().c_str(), &st) == 0);
    CHECK(S_ISSOCK(st.st_mode));
    CHECK((st.st_mode & 0777) == 0600);
    REQUIRE(::stat(d.server->runtime_dir().c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    REQUIRE(::stat(token_path(d.server->runtime_dir()).c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    // A second daemon on the same socket is refused, and the first keeps serving.
    daemon_config cfg;
    cfg.runtime_dir = d.server->runtime_dir();
    daemon_server second(cfg, nullptr);
    auto s = second.start();
    REQUIRE_FALSE(s);
    CHECK_THAT(s.message(), Catch::Matchers::Contains("already serving"));
    auto c = d.unix_client();
    initialize(c);
    d.stop();
    CHECK(::stat(d.server->socket_path().c_str(), &st) != 0);   // removed at shutdown
    CHECK(::stat(token_path(d.server->runtime_dir()).c_str(), &st) != 0);
}

TEST_CASE("daemon: lifecycle and inline completion over the Unix socket", "[daemon][transport]") {
    running_daemon d;
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/a.cpp";
    open_doc(c, uri, "int main() {\n    int x = 1;\n    return x\n}\n");
    REQUIRE(c.request(2, "textDocument/inlineCompletion", completion_params(uri, 2, 12, 1)));
    auto r = ok_result(c, 2);
    const auto & items = r.at("items").as_array();
    REQUIRE(items.size() == 3);   // Invoked: several distinct candidates
    CHECK(items[0].at("insertText").as_string() == "ok0_40_3");
    CHECK(items[1].at("insertText").as_string() == "ok1_40_3");
    CHECK(items[0].at("range").at("start").at("line").as_int64() == 2);
    CHECK(items[0].at("range").at("start").at("character").as_int64() == 12);
    CHECK(items[0].at("command").at("command").as_string() == "hearth.acceptCompletion");
    CHECK(d.model->last_fim().prefix == "int main() {\n    int x = 1;\n    return x");
    CHECK(d.model->last_fim().mode == completion_mode::single_line);

    // Automatic: one candidate; multi-line after an opening bracket, suffix repeat trimmed.
    { const bool sent_ = static_cast<bool>(c.notify("textDocument/didChange",
                     {{"textDocument", {{"uri", uri}, {"version", 2}}},
                      {"contentChanges", json::array{{{"text", "void f() {\n}\n"}}}}})); REQUIRE(sent_); }
    REQUIRE(c.request(3, "textDocument/inlineCompletion", completion_params(uri, 0, 10, 2)));
    auto r3 = ok_result(c, 3);
    REQUIRE(r3.at("items").as_array().size() == 1);
    CHECK(r3.at("items").at(0).at("insertText").as_string() == "\n    body0();");
    CHECK(d.model->last_fim().mode == completion_mode::multi_line);

    REQUIRE(c.request(4, "hearth/status"));
    auto st = ok_result(c, 4);
    CHECK(st.at("model").as_string() == "scripted");
    CHECK(st.at("mappedBytes").as_int64() == 1234);

    REQUIRE(c.request(5, "shutdown", nullptr));
    ok_result(c, 5);
    REQUIRE(c.notify("exit", nullptr));
    CHECK(c.wait_closed());
}

namespace {

void replace_text(test_client & c, const std::string & uri, int version, const std::string & text) {
    const bool sent = static_cast<bool>(c.notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", version}}},
                                                                            {"contentChanges", json::array{{{"text", text}}}}}));
    REQUIRE(sent);
}

}  // namespace

TEST_CASE("daemon: typing the start of a suggestion is answered from it, without the model", "[daemon][suggestion]") {
    running_daemon d;
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/t.py";
    open_doc(c, uri, "x = ", "python");
    REQUIRE(c.request(2, "textDocument/inlineCompletion", completion_params(uri, 0, 4, 2)));
    CHECK(ok_result(c, 2).at("items").at(0).at("insertText").as_string() == "ok0_4_0");
    CHECK(d.model->n_complete() == 1);
    // The user types "ok0": the rest of the suggestion, at the new cursor, no model call.
    replace_text(c, uri, 2, "x = ok0");
    REQUIRE(c.request(3, "textDocument/inlineCompletion", completion_params(uri, 0, 7, 2)));
    auto r = ok_result(c, 3);
    CHECK(r.at("items").at(0).at("insertText").as_string() == "_4_0");
    CHECK(r.at("items").at(0).at("range").at("start").at("character").as_int64() == 7);
    CHECK(d.model->n_complete() == 1);
    // Typing something the suggestion does not start with, or an Invoked request: the model.
    replace_text(c, uri, 3, "x = ok1");
    REQUIRE(c.request(4, "textDocument/inlineCompletion", completion_params(uri, 0, 7, 2)));
    CHECK(ok_result(c, 4).at("items").at(0).at("insertText").as_string() == "ok0_7_0");
    CHECK(d.model->n_complete() == 2);
    REQUIRE(c.request(5, "textDocument/inlineCompletion", completion_params(uri, 0, 7, 1)));
    CHECK(ok_result(c, 5).at("items").as_array().size() == 3);
    CHECK(d.model->n_complete() == 3);
    REQUIRE(c.request(6, "hearth/status"));
    CHECK(ok_result(c, 6).at("completionsFromMemory").as_int64() == 1);
}

TEST_CASE("daemon: the completion after an accept is prefetched while the suggestion is shown", "[daemon][suggestion]") {
    running_daemon d({}, 1ms, /*prefetch=*/true);
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/p.py";
    open_doc(c, uri, "x = ", "python");
    REQUIRE(c.request(2, "textDocument/inlineCompletion", completion_params(uri, 0, 4, 2)));
    CHECK(ok_result(c, 2).at("items").at(0).at("insertText").as_string() == "ok0_4_0");
    // The background job runs the model once more, on the text with the suggestion accepted.
    int64_t prefetched = 0;
    for (int i = 0; i < 200 && prefetched == 0; ++i) {
        REQUIRE(c.request(100 + i, "hearth/status"));
        prefetched = ok_result(c, 100 + i).at("completionsPrefetched").as_int64();
        if (prefetched == 0) std::this_thread::sleep_for(10ms);
    }
    REQUIRE(prefetched == 1);
    CHECK(d.model->last_fim().prefix == "x = ok0_4_0");
    CHECK(d.model->n_complete() == 2);
    // The user accepts (the editor inserts the text) and the next request is answered from
    // the prefetched completion: what the model would have said for "x = ok0_4_0".
    replace_text(c, uri, 2, "x = ok0_4_0");
    REQUIRE(c.request(3, "textDocument/inlineCompletion", completion_params(uri, 0, 11, 2)));
    CHECK(ok_result(c, 3).at("items").at(0).at("insertText").as_string() == "ok0_11_0");
    CHECK(d.model->n_complete() <= 3);   // at most the next prefetch; the answer needed no call
}

TEST_CASE("daemon: pieces of the other files worked in go first in the prompt", "[daemon][context]") {
    running_daemon d;
    auto c = d.unix_client();
    initialize(c);
    open_doc(c, "file:///w/util.py", "def helper(x):\n    return x + 1\n", "python");
    open_doc(c, "file:///w/main.py", "import util\n\nprint(util.", "python");
    REQUIRE(c.request(2, "textDocument/inlineCompletion", completion_params("file:///w/main.py", 2, 11, 2)));
    ok_result(c, 2);
    // util.py was opened: its top is context for main.py; main.py is not context for itself.
    auto extra = d.model->last_fim().extra_context;
    REQUIRE(extra.size() == 1);
    CHECK(extra[0].uri == "file:///w/util.py");
    CHECK(extra[0].text == "def helper(x):\n    return x + 1\n");
    // Moving to util.py: main.py (opened, then worked in) is its context.
    REQUIRE(c.request(3, "textDocument/inlineCompletion", completion_params("file:///w/util.py", 1, 16, 2)));
    ok_result(c, 3);
    extra = d.model->last_fim().extra_context;
    REQUIRE(extra.size() == 1);
    CHECK(extra[0].uri == "file:///w/main.py");
    CHECK(extra[0].text == "import util\n\nprint(util.\n");
}

TEST_CASE("daemon: UTF-16 positions with non-ASCII text", "[daemon][transport]") {
    running_daemon d;
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/u.py";
    open_doc(c, uri, "s = \"h\xC3\xA9llo \xF0\x9F\x99\x82\" + ", "python");   // "héllo 🙂"
    // UTF-16: s = "héllo 🙂" + | is at 4 + 1 + 5 + 1 + 2 + 1 + 3 = 17
    REQUIRE(c.request(2, "textDocument/inlineCompletion", completion_params(uri, 0, 17, 2)));
    auto r = ok_result(c, 2);
    CHECK(d.model->last_fim().prefix == "s = \"h\xC3\xA9llo \xF0\x9F\x99\x82\" + ");
    CHECK(r.at("items").at(0).at("range").at("start").at("character").as_int64() == 17);
}

TEST_CASE("daemon: TCP requires the token before anything else", "[daemon][transport][auth]") {
    running_daemon d;
    SECTION("no auth: initialize first closes the connection unanswered") {
        auto c = d.tcp_client(false);
        { const bool sent_ = static_cast<bool>(c.request(1, "initialize", {{"capabilities", json::object{}}})); REQUIRE(sent_); }
        CHECK_FALSE(c.next(2s));
        CHECK(c.closed());
    }
    SECTION("wrong token") {
        auto c = d.tcp_client(false);
        { const bool sent_ = static_cast<bool>(c.notify("hearth/auth", {{"token", std::string(64, '0')}})); REQUIRE(sent_); }
        CHECK(c.wait_closed());
    }
    SECTION("an HTTP request is refused") {
        auto c = d.tcp_client(false);
        { const bool sent_ = static_cast<bool>(c.send_raw("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}")); REQUIRE(sent_); }
        CHECK(c.wait_closed());
    }
    SECTION("right token, as a request, then LSP in the same write") {
        auto c = test_client::connect_tcp(d.server->tcp_port());
        REQUIRE(c);
        auto tok = read_token_file(token_path(d.server->runtime_dir()));
        REQUIRE(tok);
        const std::string auth = json::serialize(json::value{{"jsonrpc", "2.0"}, {"id", 0}, {"method", "hearth/auth"}, {"params", {{"token", *tok}}}});
        const std::string init = json::serialize(json::value{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}, {"params", {{"capabilities", json::object{}}}}});
        REQUIRE(c->send_raw("Content-Length: " + std::to_string(auth.size()) + "\r\n\r\n" + auth + "Content-Length: " +
                            std::to_string(init.size()) + "\r\n\r\n" + init));
        CHECK(ok_result(*c, 0).is_null());
        CHECK(ok_result(*c, 1).as_object().contains("capabilities"));
    }
}

TEST_CASE("daemon: hearth/status answers in milliseconds while a chat generates", "[daemon][scheduler]") {
    running_daemon d({}, 20ms);   // 20 ms per token: the chat runs for seconds
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/long.cpp";
    open_doc(c, uri, "int f();\nint g();\n");
    REQUIRE(c.request(2, "hearth/chat", chat_params(uri, "explain everything in great detail please", "tok")));
    auto st = std::chrono::steady_clock::now();
    while (!d.model->running() && std::chrono::steady_clock::now() - st < 2s) std::this_thread::sleep_for(1ms);
    REQUIRE(d.model->running());
    auto status_client = d.unix_client();
    initialize(status_client);
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(status_client.request(9, "hearth/status"));
    auto s = ok_result(status_client, 9);
    const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(ms < 200);
    CHECK(s.at("jobsRunning").as_bool());   // `extra` is merged into the result object
    CHECK(d.model->running());   // the chat is still going
    // Cancel it: answered -32800 at its next token, long before it would finish.
    const auto t1 = std::chrono::steady_clock::now();
    { const bool sent_ = static_cast<bool>(c.notify("$/cancelRequest", {{"id", 2}})); REQUIRE(sent_); }
    CHECK(error_code(c, 2) == -32800);
    CHECK(std::chrono::steady_clock::now() - t1 < 1s);
    // Pieces were streamed as $/progress with the partial result token before the cancel.
    bool progress = false;
    for (const auto & m : c.skipped)
        if (m.as_object().contains("method") && m.at("method").as_string() == "$/progress") {
            progress = true;
            CHECK(m.at("params").at("token").as_string() == "tok");
        }
    CHECK(progress);
}

TEST_CASE("daemon: chat streams and answers the whole text", "[daemon][chat]") {
    running_daemon d;
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/c.cpp";
    open_doc(c, uri, "int add(int a, int b) { return a - b; }\n");
    REQUIRE(c.request(2, "hearth/chat", chat_params(uri, "why \xC3\xA9?", 7)));
    auto r = ok_result(c, 2);
    std::string streamed;
    for (const auto & m : c.skipped)
        if (m.at("method").as_string() == "$/progress") streamed += m.at("params").at("value").at("text").as_string();
    CHECK(r.at("text").as_string() == streamed);
    CHECK_THAT(std::string(r.at("text").as_string()), Catch::Matchers::StartsWith("echo: why \xC3\xA9?"));
    CHECK_THAT(d.model->last_chat().messages.back().content, Catch::Matchers::Contains("int add(int a, int b)"));

    // hearth.explain as a command.
    json::object arg{{"textDocument", {{"uri", uri}}},
                     {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 10}}}}}};
    json::object cmd{{"command", "hearth.explain"}, {"arguments", json::array{arg}}};
    REQUIRE(c.request(3, "workspace/executeCommand", cmd));
    auto r3 = ok_result(c, 3);
    CHECK_THAT(std::string(r3.at("text").as_string()), Catch::Matchers::Contains("Explain"));
}

TEST_CASE("daemon: a newer completion for the same document cancels the older one", "[daemon][scheduler]") {
    running_daemon d({}, 5ms);
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/n.cpp";
    open_doc(c, uri, "int x = \n");
    for (int i = 0; i < 5; ++i) REQUIRE(c.request(10 + i, "textDocument/inlineCompletion", completion_params(uri, 0, 8, 2)));
    for (int i = 0; i < 4; ++i) CHECK(error_code(c, 10 + i) == -32800);
    auto last = ok_result(c, 14);
    CHECK(last.at("items").as_array().size() == 1);
    CHECK(d.model->n_complete() <= 2);   // the burst was debounced, not computed five times
}

TEST_CASE("daemon: overload is answered busy, never queued without bound", "[daemon][scheduler]") {
    daemon_config cfg;
    cfg.limits.max_queued = 2;
    cfg.chat.max_tokens = 20;   // 20 pieces of 30 ms: each accepted chat takes 0.6 s
    running_daemon d(cfg, 30ms);
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/b.cpp";
    open_doc(c, uri, "x\n");
    for (int i = 0; i < 6; ++i) REQUIRE(c.request(10 + i, "hearth/chat", chat_params(uri, "q")));
    int busy = 0, ok = 0;
    for (int i = 0; i < 6; ++i) {
        auto r = c.reply_to(10 + i, 10s);
        REQUIRE(r);
        if (r->as_object().contains("error")) {
            ++busy;
            CHECK_THAT(std::string(r->at("error").at("message").as_string()), Catch::Matchers::Contains("server busy"));
        } else {
            ++ok;
        }
    }
    CHECK(busy >= 3);
    CHECK(ok + busy == 6);
}

TEST_CASE("daemon: a client vanishing mid-stream frees its work", "[daemon][transport]") {
    running_daemon d({}, 20ms);
    {
        auto c = d.unix_client();
        initialize(c);
        open_doc(c, "file:///w/v.cpp", "int v;\n");
        REQUIRE(c.request(2, "hearth/chat", chat_params("file:///w/v.cpp", "a long question that takes a while to echo back", "p")));
        auto first = c.next(2s);   // the first streamed piece: generation is under way
        REQUIRE(first);
        CHECK(first->at("method").as_string() == "$/progress");
    }   // closed without shutdown
    const auto t0 = std::chrono::steady_clock::now();
    while (d.model->n_stopped() == 0 && std::chrono::steady_clock::now() - t0 < 2s) std::this_thread::sleep_for(5ms);
    CHECK(d.model->n_stopped() == 1);
    // and its document was released in the engine (no other connection has it open)
    while (d.model->released().empty() && std::chrono::steady_clock::now() - t0 < 2s) std::this_thread::sleep_for(5ms);
    CHECK(d.model->released() == std::vector<std::string>{"file:///w/v.cpp"});
}

TEST_CASE("daemon: a slow sender is disconnected after the partial-message timeout", "[daemon][transport]") {
    daemon_config cfg;
    cfg.limits.partial_message_timeout_ms = 300;
    cfg.limits.auth_timeout_ms = 300;
    running_daemon d(cfg);
    auto c = d.unix_client();
    initialize(c);
    const auto t0 = std::chrono::steady_clock::now();
    { const bool sent_ = static_cast<bool>(c.send_raw("Content-Length: 100\r\n\r\n{\"jsonrpc\":")); REQUIRE(sent_); }
    CHECK(c.wait_closed(3s));
    const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(ms >= 250);
    CHECK(ms < 2000);
    // TCP: the auth message has its own deadline (limits.auth-timeout-ms), here as short.
    auto t = d.tcp_client(false);
    REQUIRE(t.send_raw("Content-Len"));
    CHECK(t.wait_closed(3s));
}

TEST_CASE("daemon: shutdown answers what is in flight and removes the socket", "[daemon][transport]") {
    running_daemon d({}, 20ms);
    auto c = d.unix_client();
    initialize(c);
    open_doc(c, "file:///w/s.cpp", "s\n");
    REQUIRE(c.request(2, "hearth/chat", chat_params("file:///w/s.cpp", "a question long enough to still run at shutdown", "p")));
    REQUIRE(c.request(3, "hearth/chat", chat_params("file:///w/s.cpp", "queued behind it")));
    auto first = c.next(2s);
    REQUIRE(first);
    CHECK(first->at("method").as_string() == "$/progress");
    d.stop();
    CHECK(d.exit_code == 0);
    CHECK(error_code(c, 2) == -32800);
    CHECK(error_code(c, 3) == -32800);
    CHECK(c.wait_closed());
    struct stat st {};
    CHECK(::stat(d.server->socket_path().c_str(), &st) != 0);
}

TEST_CASE("daemon: malformed input gets errors, fatal framing closes only that connection", "[daemon][transport]") {
    running_daemon d;
    auto c = d.unix_client();
    initialize(c);
    { const bool sent_ = static_cast<bool>(c.send_raw("Content-Length: 5\r\n\r\n{nope")); REQUIRE(sent_); }
    auto r = c.next();
    REQUIRE(r);
    CHECK(r->at("error").at("code").as_int64() == -32700);
    { const bool sent_ = static_cast<bool>(c.request(5, "textDocument/inlineCompletion", {{"textDocument", 3}})); REQUIRE(sent_); }
    CHECK(error_code(c, 5) == -32602);
    REQUIRE(c.request(6, "textDocument/inlineCompletion", completion_params("file:///not/open", 0, 0)));
    CHECK(error_code(c, 6) == -32602);
    auto other = d.unix_client();
    initialize(other);
    { const bool sent_ = static_cast<bool>(c.send_raw("Content-Length: 2\r\nX-Evil: 1\r\n\r\n{}")); REQUIRE(sent_); }
    CHECK(c.wait_closed());
    REQUIRE(other.request(2, "hearth/status"));
    ok_result(other, 2);   // the daemon and the other client are unaffected
}

TEST_CASE("daemon: hearth/status counts why answers were cut, trimmed or empty", "[daemon][status]") {
    running_daemon d;
    auto c = d.unix_client();
    initialize(c);
    // Multi-line at the blank line of a block: the scripted answer ends by repeating the
    // suffix's next line, which the cleanup cuts.
    open_doc(c, "file:///b.cpp", "if (x) {\n    \n    done();\n}\n");
    REQUIRE(c.request(2, "textDocument/inlineCompletion", completion_params("file:///b.cpp", 1, 4, 2)));
    const auto items = ok_result(c, 2).at("items").as_array();
    REQUIRE(items.size() == 1);
    // Single-line, where the editor's line already holds the whole answer: emptied by the overlap.
    open_doc(c, "file:///c.cpp", "int y = ok0_8_9;\n");
    REQUIRE(c.request(3, "textDocument/inlineCompletion", completion_params("file:///c.cpp", 0, 8, 2)));
    CHECK(ok_result(c, 3).at("items").as_array().empty());
    REQUIRE(c.request(4, "hearth/status"));
    const auto st = ok_result(c, 4);
    INFO(json::serialize(st));
    REQUIRE(st.as_object().contains("completionOutcomes"));
    const auto & o = st.at("completionOutcomes");
    CHECK(o.at("trimmed").at("suffix_line").as_int64() == 1);
    CHECK(o.at("empty").as_int64() == 1);
    CHECK(o.at("emptyBecause").at("overlap").as_int64() == 1);
    CHECK(o.at("ends").at("end_of_generation").as_int64() == 2);
}

namespace {
void rest_cursor(test_client & c, const std::string & uri, int line, int ch) {
    const bool sent = static_cast<bool>(c.notify("hearth/cursorRest", {{"textDocument", {{"uri", uri}}},
                                                                      {"position", {{"line", line}, {"character", ch}}}}));
    REQUIRE(sent);
}
void wait_warm_ups(scripted_model & m, int n) {
    for (int i = 0; i < 400 && m.n_warm_ups() < n; ++i) std::this_thread::sleep_for(5ms);
    REQUIRE(m.n_warm_ups() == n);
}
}  // namespace

TEST_CASE("daemon: where the cursor rests, the window is warmed in the background and yields to a request",
          "[daemon][warm-up]") {
    running_daemon d({}, 1ms, /*prefetch=*/false, /*warm_up=*/true);
    d.model->warm_up_time = 5s;   // a long prefill, so the requests below arrive while it runs
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/rest.py", other = "file:///w/other.py";
    const std::string text = "def f(x):\n    y = x\n    \n    return y\n";
    open_doc(c, other, "z = 1\n", "python");
    open_doc(c, uri, text, "python");
    // The file just opened is warmed at its top once the editor stops opening files (the
    // first one's warm-up was replaced before it began)...
    wait_warm_ups(*d.model, 1);
    CHECK(d.model->last_warm_up().prefix.empty());
    CHECK(d.model->last_warm_up().uri == uri);
    // ... and the cursor coming to rest elsewhere replaces that warm-up with one there: the
    // window a request at that place would evaluate, with nothing generated.
    rest_cursor(c, uri, 2, 4);
    wait_warm_ups(*d.model, 2);
    CHECK(d.model->n_warm_ups_stopped() == 1);
    const fim_request warm = d.model->last_warm_up();
    CHECK(warm.prefill_only);
    CHECK(warm.prefix == "def f(x):\n    y = x\n    ");
    CHECK(warm.suffix == "\n    return y\n");
    CHECK(d.model->n_complete() == 0);
    // A request elsewhere stops it at once (the scripted prefill checks its stop every ms).
    auto t0 = std::chrono::steady_clock::now();
    REQUIRE(c.request(3, "textDocument/inlineCompletion", completion_params(other, 0, 5, 2)));
    ok_result(c, 3);
    CHECK(std::chrono::steady_clock::now() - t0 < 2s);
    CHECK(d.model->n_warm_ups_stopped() == 2);

    // Typing where the warm-up runs: the edit leaves it be, and the request there waits for it,
    // then evaluates the same window with the typed text.
    d.model->warm_up_time = 300ms;
    rest_cursor(c, uri, 2, 4);
    wait_warm_ups(*d.model, 3);
    { const bool sent = static_cast<bool>(c.notify("textDocument/didChange",
          {{"textDocument", {{"uri", uri}, {"version", 2}}},
           {"contentChanges", json::array{{{"range", {{"start", {{"line", 2}, {"character", 4}}}, {"end", {{"line", 2}, {"character", 4}}}}},
                                           {"text", "r"}}}}}));
      REQUIRE(sent); }
    REQUIRE(c.request(4, "textDocument/inlineCompletion", completion_params(uri, 2, 5, 2)));
    ok_result(c, 4);
    CHECK(d.model->n_warm_ups_stopped() == 2);   // it ran to its end
    CHECK(d.model->last_fim().prefix == warm.prefix + "r");
    CHECK(d.model->last_fim().suffix == warm.suffix);

    // Another connection's request preempts a warm-up (it yields to everyone's requests).
    d.model->warm_up_time = 5s;
    rest_cursor(c, uri, 0, 0);
    wait_warm_ups(*d.model, 4);
    auto c2 = d.unix_client();
    initialize(c2);
    open_doc(c2, other, "z = 1\n", "python");
    t0 = std::chrono::steady_clock::now();
    REQUIRE(c2.request(5, "textDocument/inlineCompletion", completion_params(other, 0, 5, 2)));
    ok_result(c2, 5);
    CHECK(std::chrono::steady_clock::now() - t0 < 2s);
    CHECK(d.model->n_warm_ups_stopped() == 3);
    REQUIRE(c.request(6, "hearth/status"));
    CHECK(ok_result(c, 6).at("jobsPreempted").as_int64() == 1);
    // A rest in a document that is not open is ignored.
    rest_cursor(c, "file:///w/closed.py", 0, 0);
    std::this_thread::sleep_for(50ms);
    CHECK(d.model->n_warm_ups() == 4);
}

TEST_CASE("daemon: with warm-up off, neither opening a file nor a resting cursor runs the model", "[daemon][warm-up]") {
    running_daemon d;   // warm-up off
    auto c = d.unix_client();
    initialize(c);
    open_doc(c, "file:///w/a.py", "x = 1\n", "python");
    rest_cursor(c, "file:///w/a.py", 0, 5);
    std::this_thread::sleep_for(500ms);
    CHECK(d.model->n_warm_ups() == 0);
}
