#include <cstdlib>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "daemon/server/auth.h"
#include "daemon/settings/runtime_dir.h"

using namespace hearth::daemon;

namespace {

std::string frame(const std::string & body) { return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body; }

std::string auth_body(const std::string & token) {
    return R"({"jsonrpc":"2.0","method":"hearth/auth","params":{"token":")" + token + R"("}})";
}

std::string temp_dir() {
    char tmpl[] = "/tmp/hearth-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    return tmpl;
}

}  // namespace

TEST_CASE("tokens are 256 random bits in hex, different each time", "[daemon][auth]") {
    auto a = generate_token();
    auto b = generate_token();
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->size() == 64);
    CHECK(a->find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(*a != *b);
}

TEST_CASE("tokens_equal compares exactly", "[daemon][auth]") {
    const std::string t(64, 'a');
    CHECK(tokens_equal(t, t));
    std::string last = t;
    last.back() = 'b';
    std::string first = t;
    first.front() = 'b';
    CHECK_FALSE(tokens_equal(t, last));
    CHECK_FALSE(tokens_equal(t, first));
    CHECK_FALSE(tokens_equal(t, t.substr(0, 63)));
    CHECK_FALSE(tokens_equal(t, ""));
}

TEST_CASE("token file is written 0600 and read back; loose modes are refused", "[daemon][auth]") {
    const std::string dir = temp_dir();
    const std::string path = token_path(dir);
    auto tok = generate_token();
    REQUIRE(tok);
    REQUIRE(write_token_file(path, *tok));
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    auto back = read_token_file(path);
    REQUIRE(back);
    CHECK(*back == *tok);
    ::chmod(path.c_str(), 0644);
    auto loose = read_token_file(path);
    REQUIRE_FALSE(loose);
    CHECK(loose.message().find("mode 600") != std::string::npos);
    ::unlink(path.c_str());
    CHECK_FALSE(read_token_file(path));
    ::rmdir(dir.c_str());
}

TEST_CASE("auth_gate accepts the right token, split anywhere, and keeps what follows", "[daemon][auth]") {
    const std::string token(64, 'c');
    const std::string next = frame(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
    const std::string stream = frame(auth_body(token)) + next;
    const size_t split = GENERATE(1, 5, 20, 40, 80);
    auth_gate g(token);
    auto s1 = g.feed(std::string_view(stream).substr(0, std::min(split, stream.size())));
    if (split < stream.size() - next.size()) CHECK(s1 == auth_gate::state::need_more);
    auto s2 = g.feed(std::string_view(stream).substr(std::min(split, stream.size())));
    CHECK(s2 == auth_gate::state::accepted);
    CHECK(g.leftover() == next);
    CHECK_FALSE(g.reply_id_json());
}

TEST_CASE("auth_gate remembers a request id to answer", "[daemon][auth]") {
    const std::string token(64, 'd');
    auth_gate g(token);
    CHECK(g.feed(frame(R"({"jsonrpc":"2.0","id":"a1","method":"hearth/auth","params":{"token":")" + token + "\"}}")) ==
          auth_gate::state::accepted);
    REQUIRE(g.reply_id_json());
    CHECK(*g.reply_id_json() == "\"a1\"");
}

TEST_CASE("auth_gate rejects everything but hearth/auth with the right token", "[daemon][auth]") {
    const std::string token(64, 'e');
    struct bad_case {
        std::string name, bytes, reason;
    };
    std::string wrong = token;
    wrong[10] = 'f';
    const std::vector<bad_case> cases = {
        {"wrong token", frame(auth_body(wrong)), "wrong token"},
        {"short token", frame(auth_body("abc")), "wrong token"},
        {"initialize first", frame(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})"), "must be hearth/auth"},
        {"http request", "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "malformed header"},
        {"other header", "Content-Length: 2\r\nOrigin: evil\r\n\r\n{}", "unexpected header"},
        {"not json", frame("{nope"), "not a JSON object"},
        {"token not string", frame(R"({"jsonrpc":"2.0","method":"hearth/auth","params":{"token":5}})"), "params.token"},
        {"huge body", "Content-Length: 100000\r\n\r\n", "over 4 KiB"},
        {"endless header", std::string(2000, 'x'), "longer than 1 KiB"},
        {"bad length", "Content-Length: -1\r\n\r\n", "bad Content-Length"},
    };
    for (const auto & c : cases) {
        INFO(c.name);
        auth_gate g(token);
        CHECK(g.feed(c.bytes) == auth_gate::state::rejected);
        CHECK(g.reason().find(c.reason) != std::string::npos);
        CHECK(g.feed(frame(auth_body(token))) == auth_gate::state::rejected);  // no second chance
    }
}

TEST_CASE("ensure_private_dir creates 0700 and refuses shared directories", "[daemon][auth]") {
    const std::string base = temp_dir();
    const std::string dir = base + "/a/b";
    REQUIRE(ensure_private_dir(dir));
    struct stat st {};
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    REQUIRE(ensure_private_dir(dir));  // idempotent
    ::chmod(dir.c_str(), 0755);
    auto loose = ensure_private_dir(dir);
    REQUIRE_FALSE(loose);
    CHECK(loose.message().find("mode 755") != std::string::npos);
    ::chmod(dir.c_str(), 0700);
    const std::string link = base + "/link";
    REQUIRE(::symlink(dir.c_str(), link.c_str()) == 0);
    auto sym = ensure_private_dir(link);
    REQUIRE_FALSE(sym);
    CHECK(sym.message().find("symlink") != std::string::npos);
    CHECK_FALSE(ensure_private_dir("relative/path"));
    ::unlink(link.c_str());
    ::rmdir(dir.c_str());
    ::rmdir((base + "/a").c_str());
    ::rmdir(base.c_str());
}

TEST_CASE("default runtime dir follows XDG_RUNTIME_DIR", "[daemon][auth]") {
    const char * old = std::getenv("XDG_RUNTIME_DIR");
    const std::string saved = old ? old : "";
    ::setenv("XDG_RUNTIME_DIR", "/run/user/1234", 1);
    CHECK(default_runtime_dir() == "/run/user/1234/hearth");
    CHECK(default_socket_path() == "/run/user/1234/hearth/hearth.sock");
    ::unsetenv("XDG_RUNTIME_DIR");
    CHECK(default_runtime_dir() == "/tmp/hearth-" + std::to_string(::getuid()));
    if (old) ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
}
