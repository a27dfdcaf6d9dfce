// What one local user can do to another user's daemon, and what the client tools say when
// the daemon refuses or drops them. Another uid reaches only the loopback TCP port (the Unix
// socket is 0600 in a 0700 directory and checks the peer uid): connections that have not
// authenticated have their own small limit and a short deadline, so they never take the
// places of the owner's editors; a refused or dropped client gets a message and exit 1.
#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/daemon/hearth_process.h"
#include "tests/daemon/running_daemon.h"

using namespace hearth::daemon;
using namespace hearth::daemon::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

std::vector<test_client> idle_tcp_connections(running_daemon & d, int n) {
    std::vector<test_client> idle;
    for (int i = 0; i < n; ++i) idle.push_back(d.tcp_client(false));
    std::this_thread::sleep_for(200ms);   // all accepted by now
    return idle;
}

// The refusal a daemon sends before it closes a connection it will not serve.
std::string refusal_text(test_client & c) {
    auto m = c.next(3s);
    REQUIRE(m);
    INFO(json::serialize(*m));
    REQUIRE(m->as_object().contains("method"));
    CHECK(m->at("method").as_string() == "window/showMessage");
    CHECK(m->at("params").at("type").as_int64() == 1);
    CHECK(c.wait_closed(3s));
    return std::string(m->at("params").at("message").as_string());
}

}  // namespace

TEST_CASE("daemon: idle unauthenticated TCP connections never lock out the owner", "[daemon][security]") {
    daemon_config cfg;
    cfg.limits.max_connections = 4;
    running_daemon d(cfg);
    auto idle = idle_tcp_connections(d, 40);
    // The owner's editors on the Unix socket, and a TCP client with the token, are served.
    std::vector<test_client> editors;
    for (int i = 0; i < 3; ++i) {
        editors.push_back(d.unix_client());
        initialize(editors.back());
    }
    auto with_token = d.tcp_client(true);
    initialize(with_token);
    REQUIRE(with_token.request(2, "hearth/status"));
    CHECK(ok_result(with_token, 2).at("connections").as_int64() == 4);
    // limits.max-connections counts authenticated connections only: the fifth is refused,
    // with the reason.
    auto fifth = d.unix_client();
    CHECK_THAT(refusal_text(fifth), Catch::Contains("limits.max-connections"));
    // The owner's connections are untouched.
    REQUIRE(editors[0].request(2, "hearth/status"));
    CHECK(ok_result(editors[0], 2).is_object());
}

TEST_CASE("daemon: a TCP connection that does not authenticate is dropped at the auth deadline", "[daemon][security]") {
    running_daemon d;   // default limits: partial messages may take 10 s, the auth message 2 s
    auto t = d.tcp_client(false);
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(t.wait_closed(4s));
    const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(ms >= 1500);
    CHECK(ms < 4000);
}

TEST_CASE("daemon: past the unauthenticated limit the oldest waiting connection is dropped", "[daemon][security]") {
    daemon_config cfg;
    cfg.limits.max_unauthenticated = 2;
    running_daemon d(cfg);
    auto idle = idle_tcp_connections(d, 3);
    CHECK(idle[0].wait_closed(2s));
    CHECK_FALSE(idle[1].wait_closed(100ms));
    CHECK_FALSE(idle[2].wait_closed(100ms));
    // A client that authenticates at once still gets in while others keep the slots busy.
    auto more = idle_tcp_connections(d, 10);
    auto with_token = d.tcp_client(true);
    initialize(with_token);
}

namespace {

struct tool_run {
    int exit_code = -1;
    std::string out, err;
};

// Runs a client tool to its end. An editor keeps the shim's stdin open: `keep_stdin` does too.
tool_run run_tool(const std::vector<std::string> & args, const std::string & dir, bool keep_stdin = false) {
    std::ofstream(dir + "/empty.toml").flush();
    auto all = args;
    all.insert(all.end(), {"--config", dir + "/empty.toml"});
    const std::string log = dir + "/tool.log";
    std::ofstream(log, std::ios::trunc).flush();
    child c = spawn(all, log);
    if (!keep_stdin) ::close(c.to_child);
    tool_run r;
    r.out = read_to_end(c.from_child);
    r.exit_code = wait_exit(c.pid);
    if (keep_stdin) ::close(c.to_child);
    r.err = slurp(log);
    return r;
}

}  // namespace

TEST_CASE("hearth status and hearth lsp: a refused connection is a message and exit code 1", "[daemon][security][binary]") {
    daemon_config cfg;
    cfg.limits.max_connections = 1;
    running_daemon d(cfg);
    auto owner = d.unix_client();
    initialize(owner);
    SECTION("hearth status") {
        const auto r = run_tool({"status", "--socket", d.server->socket_path()}, d.dir);
        INFO("stdout: " << r.out << "\nstderr: " << r.err);
        CHECK(r.exit_code == 1);
        CHECK_THAT(r.err, Catch::Contains("refused") && Catch::Contains("limits.max-connections"));
    }
    SECTION("hearth lsp --no-start") {
        const auto r = run_tool({"lsp", "--no-start", "--socket", d.server->socket_path()}, d.dir, true);
        INFO("stdout: " << r.out << "\nstderr: " << r.err);
        CHECK(r.exit_code == 1);
        CHECK_THAT(r.err, Catch::Contains("closed the connection"));
        // The daemon's reason reaches the editor as a message it shows.
        CHECK_THAT(r.out, Catch::Contains("window/showMessage") && Catch::Contains("limits.max-connections"));
    }
}

TEST_CASE("hearth status: a daemon that goes away mid-answer is a message and exit code 1", "[daemon][security][binary]") {
    // A listener that accepts and closes at once: what a daemon killed under the client looks like.
    const std::string dir = make_temp_dir();
    const std::string sock = dir + "/dead.sock";
    const int lfd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, sock.c_str(), sizeof a.sun_path - 1);
    REQUIRE(::bind(lfd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
    REQUIRE(::listen(lfd, 4) == 0);
    std::thread closer([lfd] {
        const int c = ::accept(lfd, nullptr, nullptr);
        if (c >= 0) ::close(c);
    });
    const auto r = run_tool({"status", "--socket", sock}, dir);
    closer.join();
    ::close(lfd);
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 1);   // not 141 (SIGPIPE)
    CHECK_THAT(r.err, Catch::Contains("hearth status: ") && Catch::Contains("closed the connection"));
}
