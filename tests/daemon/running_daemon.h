// running_daemon: the daemon server in-process on the scripted model double, listening on a
// Unix socket and loopback TCP in a fresh runtime directory, run on its own thread; with the
// small JSON-RPC helpers the daemon's tests share.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "daemon/server/auth.h"
#include "daemon/server/daemon_server.h"
#include "tests/daemon/scripted_model.h"
#include "tests/daemon/test_client.h"

namespace hearth::daemon::testing {

namespace json = boost::json;

inline std::string make_temp_dir() {
    char tmpl[] = "/tmp/hearth-d-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    return tmpl;
}

struct running_daemon {
    scripted_model * model = nullptr;
    std::unique_ptr<daemon_server> server;
    std::thread thread;
    int exit_code = -1;
    std::string dir;

    // Prefetch and warm-ups are off unless asked for: their background calls would change what
    // the scripted model saw last (and how often it ran), which most tests check.
    explicit running_daemon(daemon_config cfg = {}, std::chrono::milliseconds per_token = std::chrono::milliseconds(1),
                            bool prefetch = false, bool warm_up = false) {
        cfg.completion.prefetch = prefetch;
        cfg.completion.warm_up = warm_up;
        cfg.next_edit.warm_up = warm_up;
        dir = make_temp_dir();
        cfg.runtime_dir = dir + "/run";
        if (cfg.tcp_port < 0) cfg.tcp_port = 0;
        cfg.io_threads = 2;
        auto m = std::make_unique<scripted_model>();
        m->per_token = per_token;
        model = m.get();
        server = std::make_unique<daemon_server>(cfg, std::move(m));
        auto s = server->start();
        INFO((s ? std::string() : s.message()));
        REQUIRE(s);
        thread = std::thread([this] { exit_code = server->run(); });
    }
    ~running_daemon() { stop(); }
    void stop() {
        if (!thread.joinable()) return;
        server->request_stop();
        thread.join();
    }
    test_client unix_client() {
        auto c = test_client::connect_unix(server->socket_path());
        REQUIRE(c);
        return std::move(*c);
    }
    test_client tcp_client(bool authenticate = true) {
        auto c = test_client::connect_tcp(server->tcp_port());
        REQUIRE(c);
        if (authenticate) {
            auto tok = read_token_file(token_path(server->runtime_dir()));
            REQUIRE(tok);
            { const bool sent_ = static_cast<bool>(c->notify("hearth/auth", {{"token", *tok}})); REQUIRE(sent_); }
        }
        return std::move(*c);
    }
};

inline int64_t error_code(test_client & c, int64_t id, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    auto r = c.reply_to(id, timeout);
    REQUIRE(r);
    INFO(json::serialize(*r));
    REQUIRE(r->as_object().contains("error"));
    return r->as_object().at("error").at("code").as_int64();
}

inline void initialize(test_client & c) {
    { const bool sent_ = static_cast<bool>(c.request(1, "initialize", {{"processId", nullptr}, {"capabilities", json::object{}}})); REQUIRE(sent_); }
    auto r = ok_result(c, 1);
    REQUIRE(r.as_object().contains("capabilities"));
    REQUIRE(c.notify("initialized"));
}

}  // namespace hearth::daemon::testing
