// The real `hearth` binary on the tiny fixture model: stdio transport, signals, and the
// `hearth lsp` shim starting one shared daemon for two editors at once.
// The binary is found through HEARTH_BINARY_DIR (ctest sets it).
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/daemon/test_client.h"

using namespace hearth::daemon::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

const std::string k_model = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-Q8_0.gguf";

std::string hearth_binary() {
    const char * dir = std::getenv("HEARTH_BINARY_DIR");
    INFO("HEARTH_BINARY_DIR is not set: run through ctest, or set it to the build directory");
    REQUIRE(dir != nullptr);
    const std::string bin = std::string(dir) + "/daemon/hearth";
    INFO(bin);
    REQUIRE(::access(bin.c_str(), X_OK) == 0);
    return bin;
}

std::string temp_dir() {
    char tmpl[] = "/tmp/hearth-b-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    return tmpl;
}

struct child {
    pid_t pid = -1;
    int to_child = -1;     // its stdin
    int from_child = -1;   // its stdout
};

// Starts `hearth args...` with stdin/stdout on pipes and stderr into `log`.
child spawn(const std::vector<std::string> & args, const std::string & log) {
    std::signal(SIGPIPE, SIG_IGN);
    int in[2], out[2];
    REQUIRE(::pipe(in) == 0);
    REQUIRE(::pipe(out) == 0);
    const std::string bin = hearth_binary();
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        const int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
        ::dup2(err, 2);
        for (int fd = 3; fd < 256; ++fd) ::close(fd);
        std::vector<char *> argv;
        std::vector<std::string> all = {bin};
        all.insert(all.end(), args.begin(), args.end());
        for (auto & a : all) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(bin.c_str(), argv.data());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    return {pid, in[1], out[0]};
}

int wait_exit(pid_t pid, std::chrono::milliseconds timeout = 10s) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    int st = 0;
    while (std::chrono::steady_clock::now() < end) {
        const pid_t r = ::waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        std::this_thread::sleep_for(10ms);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &st, 0);
    FAIL("process " << pid << " did not exit in time");
    return -1;
}

std::string slurp(const std::string & path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

json::value result_of(test_client & c, int64_t id, std::chrono::milliseconds timeout = 20s) {
    auto r = c.reply_to(id, timeout);
    REQUIRE(r);
    INFO(json::serialize(*r));
    REQUIRE(r->as_object().contains("result"));
    return r->at("result");
}

void init(test_client & c) {
    REQUIRE(c.request(1, "initialize", json::object{{"capabilities", json::object{}}}));
    result_of(c, 1);
    REQUIRE(c.notify("initialized"));
}

// The tiny model's head size (8) is too small for a q8_0 KV cache: f16 it is.
// It has no chat template either, and no ChatML tokens: llama2's [INST] (its <s>, </s>) formats
// its conversations.
void write_config(const std::string & dir) {
    std::ofstream(dir + "/hearth.toml") << "cache-type = \"f16\"\nchat-template = \"llama2\"\nslot-dir = \"" << dir
                                        << "/slots\"\n[completion]\nprefetch = false\n";
}

std::vector<std::string> daemon_args(const std::string & dir) {
    write_config(dir);
    return {"daemon", "--model", k_model, "--runtime-dir", dir + "/run", "--log-file", "none",
            "--log-level", "info", "--threads", "1", "--config", dir + "/hearth.toml"};
}

// `hearth daemon --stdio` on the tiny model, its stderr in <dir>/stderr.log.
child spawn_stdio_daemon(const std::string & dir) {
    auto args = daemon_args(dir);
    args.push_back("--stdio");
    return spawn(args, dir + "/stderr.log");
}

json::object doc_open(const std::string & uri, const std::string & text) {
    return {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", text}}}};
}

}  // namespace

TEST_CASE("hearth daemon --stdio serves the tiny model and exits with the LSP code", "[daemon][binary]") {
    const std::string dir = temp_dir();
    child ch = spawn_stdio_daemon(dir);
    test_client c(ch.from_child, ch.to_child);
    init(c);
    REQUIRE(c.notify("textDocument/didOpen", doc_open("file:///s.py", "Once upon a time, there was a little girl named Lily.\nShe ")));
    json::object p{{"textDocument", {{"uri", "file:///s.py"}}},
                   {"position", {{"line", 1}, {"character", 4}}},
                   {"context", {{"triggerKind", 1}}}};
    REQUIRE(c.request(2, "textDocument/inlineCompletion", p));
    // stories260K has no fill-in-the-middle tokens: the engine continues the text before the
    // cursor, and the items insert that continuation there.
    const auto items = result_of(c, 2).at("items").as_array();
    REQUIRE_FALSE(items.empty());
    CHECK_FALSE(items[0].at("insertText").as_string().empty());
    CHECK(items[0].at("range").at("start").at("character").as_int64() == 4);
    json::object chat{{"textDocument", {{"uri", "file:///s.py"}}},
                      {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 1}, {"character", 0}}}}},
                      {"prompt", "What happens next?"}};
    REQUIRE(c.request(3, "hearth/chat", chat));
    CHECK(result_of(c, 3).at("text").is_string());
    REQUIRE(c.request(4, "hearth/status"));
    auto st = result_of(c, 4);
    CHECK(st.at("mappedBytes").as_int64() == 379168);   // the Q8_0 fixture's size
    CHECK_FALSE(st.at("model").as_string().empty());
    REQUIRE(c.request(5, "shutdown"));
    result_of(c, 5);
    REQUIRE(c.notify("exit"));
    CHECK(wait_exit(ch.pid) == 0);
    CHECK(c.wait_closed());
    INFO(slurp(dir + "/stderr.log"));
    CHECK(slurp(dir + "/stderr.log").find("critical") == std::string::npos);
}

namespace {

// One --stdio daemon session: open the document, complete at its end, report the status.
json::value complete_in_fresh_daemon(const std::string & dir, const std::string & text, bool close_first) {
    child ch = spawn_stdio_daemon(dir);
    test_client c(ch.from_child, ch.to_child);
    init(c);
    REQUIRE(c.notify("textDocument/didOpen", doc_open("file:///story.txt", text)));
    json::object p{{"textDocument", {{"uri", "file:///story.txt"}}},
                   {"position", {{"line", 0}, {"character", static_cast<int64_t>(text.size())}}},
                   {"context", {{"triggerKind", 2}}}};
    REQUIRE(c.request(2, "textDocument/inlineCompletion", p));
    result_of(c, 2);
    REQUIRE(c.request(3, "hearth/status"));
    auto st = result_of(c, 3);
    if (close_first) REQUIRE(c.notify("textDocument/didClose", json::object{{"textDocument", {{"uri", "file:///story.txt"}}}}));
    REQUIRE(c.request(4, "shutdown"));
    result_of(c, 4);
    REQUIRE(c.notify("exit"));
    CHECK(wait_exit(ch.pid) == 0);
    return st;
}

std::vector<std::string> slot_files(const std::string & dir) {
    std::vector<std::string> out;
    if (!std::filesystem::exists(dir)) return out;
    for (const auto & e : std::filesystem::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".slot") out.push_back(e.path());
    return out;
}

}  // namespace

TEST_CASE("hearth daemon: KV slots persist across a restart; a corrupted slot file is ignored", "[daemon][binary]") {
    const std::string dir = temp_dir();
    const std::string text = "Once upon a time, there was a little girl named Lily. She loved to play outside. One day";
    // Cold: nothing cached; the slot is written when the daemon stops.
    auto cold = complete_in_fresh_daemon(dir, text, false);
    CHECK(cold.at("lastCachedTokens").as_int64() == 0);
    const auto files = slot_files(dir + "/slots");
    REQUIRE(files.size() == 1);
    // Restarted: the same document starts from the file; only the last two prompt tokens are
    // evaluated again (the last one's logits are needed; sequence.h), the rest comes from disk.
    // Closing the document writes the slot again.
    auto warm = complete_in_fresh_daemon(dir, text, true);
    CHECK(warm.at("lastPromptTokens").as_int64() == cold.at("lastPromptTokens").as_int64());
    CHECK(warm.at("lastCachedTokens").as_int64() == warm.at("lastPromptTokens").as_int64() - 2);
    REQUIRE(slot_files(dir + "/slots").size() == 1);

    // A torn file (cut in half): refused with a warning, removed, and the completion runs cold.
    const auto size = std::filesystem::file_size(files[0]);
    std::filesystem::resize_file(files[0], size / 2);
    std::filesystem::remove(dir + "/stderr.log");
    auto torn = complete_in_fresh_daemon(dir, text, false);
    CHECK(torn.at("lastCachedTokens").as_int64() == 0);
    const std::string log = slurp(dir + "/stderr.log");
    INFO(log);
    CHECK(log.find("KV slot store") != std::string::npos);
    CHECK(log.find("critical") == std::string::npos);
    CHECK(std::filesystem::file_size(files[0]) == size);   // written whole again at the stop
}

TEST_CASE("hearth daemon --stdio: replies to what came before exit in the same burst are sent", "[daemon][binary]") {
    const std::string dir = temp_dir();
    child ch = spawn_stdio_daemon(dir);
    test_client c(ch.from_child, ch.to_child);
    // Written back to back without waiting: the daemon reads them together with `exit`.
    REQUIRE(c.request(1, "initialize", json::object{{"capabilities", json::object{}}}));
    REQUIRE(c.notify("initialized"));
    REQUIRE(c.request(2, "hearth/status"));
    REQUIRE(c.request(3, "shutdown"));
    REQUIRE(c.notify("exit"));
    CHECK(result_of(c, 1).at("capabilities").is_object());
    CHECK(result_of(c, 2).at("connections").as_int64() == 1);
    CHECK(result_of(c, 3).is_null());
    CHECK(wait_exit(ch.pid) == 0);
}

TEST_CASE("hearth daemon --stdio: exit without shutdown is exit code 1", "[daemon][binary]") {
    const std::string dir = temp_dir();
    child ch = spawn_stdio_daemon(dir);
    test_client c(ch.from_child, ch.to_child);
    init(c);
    REQUIRE(c.notify("exit"));
    CHECK(wait_exit(ch.pid) == 1);
}

TEST_CASE("hearth daemon: SIGTERM answers what is in flight and removes the socket", "[daemon][binary]") {
    const std::string dir = temp_dir();
    child ch = spawn(daemon_args(dir), dir + "/stderr.log");
    const std::string sock = dir + "/run/hearth.sock";
    // The daemon is starting: retry the connection for up to 10 s.
    auto connect = [&sock] {
        for (int i = 0; i < 1000; ++i) {
            if (auto t = test_client::connect_unix(sock)) return t;
            std::this_thread::sleep_for(10ms);
        }
        return std::optional<test_client>();
    };
    auto c = connect();
    INFO(slurp(dir + "/stderr.log"));
    REQUIRE(c);
    struct stat st {};
    REQUIRE(::stat(sock.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    init(*c);
    REQUIRE(c->notify("textDocument/didOpen", doc_open("file:///t.py", "Tom had a big red ball.\n")));
    json::object chat{{"textDocument", {{"uri", "file:///t.py"}}},
                      {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 1}, {"character", 0}}}}},
                      {"prompt", "Tell a story."}, {"partialResultToken", "p"}};
    REQUIRE(c->request(2, "hearth/chat", chat));
    auto first = c->next(10s);   // generation has started (or already finished)
    REQUIRE(first);
    if (!first->as_object().contains("method")) c->skipped.push_back(*first);   // the reply itself
    ::kill(ch.pid, SIGTERM);
    auto r = c->reply_to(2, 10s);
    REQUIRE(r);   // answered: the whole text if it finished first, else -32800
    if (r->as_object().contains("error")) CHECK(r->at("error").at("code").as_int64() == -32800);
    CHECK(wait_exit(ch.pid) == 0);
    CHECK(::stat(sock.c_str(), &st) != 0);
    CHECK(::stat((dir + "/run/hearth.token").c_str(), &st) != 0);
}

TEST_CASE("hearth lsp: two editors starting at once share one daemon", "[daemon][binary]") {
    const std::string dir = temp_dir();
    write_config(dir);
    const std::vector<std::string> shim = {"lsp", "--model", k_model, "--runtime-dir", dir + "/run",
                                           "--log-file", dir + "/daemon.log", "--log-level", "info",
                                           "--config", dir + "/hearth.toml", "--cache-type", "f16",
                                           "--kv-budget", "64MiB", "--threads", "1"};
    child a = spawn(shim, dir + "/a.log");
    child b = spawn(shim, dir + "/b.log");
    test_client ca(a.from_child, a.to_child), cb(b.from_child, b.to_child);
    INFO(slurp(dir + "/a.log") << slurp(dir + "/b.log") << slurp(dir + "/daemon.log"));
    init(ca);
    init(cb);
    REQUIRE(ca.request(2, "hearth/status"));
    const auto st = result_of(ca, 2);
    CHECK(st.at("connections").as_int64() == 2);
    // The daemon the shim started got the shim's engine settings.
    CHECK(st.at("cacheType").as_string() == "f16");
    CHECK(st.at("threads").as_int64() == 1);
    CHECK(st.at("kvBudgetBytes").as_int64() == 64 << 20);
    // `hearth status` asks the same daemon (as a third connection) and prints it.
    child s = spawn({"status", "--runtime-dir", dir + "/run", "--config", dir + "/hearth.toml"}, dir + "/status.log");
    ::close(s.to_child);
    std::string printed;
    char chunk[4096];
    for (ssize_t n; (n = ::read(s.from_child, chunk, sizeof chunk)) > 0;) printed.append(chunk, static_cast<size_t>(n));
    CHECK(wait_exit(s.pid) == 0);
    INFO(printed << slurp(dir + "/status.log"));
    CHECK(printed.find("KV cache f16") != std::string::npos);
    CHECK(printed.find("3 connections") != std::string::npos);
    CHECK(printed.find("hit rate") != std::string::npos);
    // Exactly one daemon: the socket's lock names it; its log shows one start.
    const std::string pid_text = slurp(dir + "/run/hearth.sock.lock");
    const pid_t daemon_pid = static_cast<pid_t>(std::atol(pid_text.c_str()));
    REQUIRE(daemon_pid > 0);
    const std::string log = slurp(dir + "/daemon.log");
    size_t starts = 0;
    for (size_t p = log.find("listening on unix socket"); p != std::string::npos; p = log.find("listening on unix socket", p + 1)) ++starts;
    CHECK(starts == 1);
    // An editor closing its stdin ends only its own shim.
    ::close(a.to_child);
    CHECK(wait_exit(a.pid) == 0);
    REQUIRE(cb.request(3, "hearth/status"));
    CHECK(result_of(cb, 3).at("connections").as_int64() == 1);
    // The daemon stopping ends the other shim.
    ::kill(daemon_pid, SIGTERM);
    CHECK(cb.wait_closed(10s));
    CHECK(wait_exit(b.pid) == 0);
}

TEST_CASE("hearth bench --json: pp and tg speeds, tg against the bandwidth measured beside it", "[daemon][binary]") {
    const std::string dir = temp_dir();
    auto c = spawn({"bench", "-m", k_model, "-t", "1", "-p", "8", "-n", "4", "-r", "2", "--cache-type", "f16", "--json"},
                   dir + "/stderr.log");
    ::close(c.to_child);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(c.from_child, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    ::close(c.from_child);
    INFO(out << slurp(dir + "/stderr.log"));
    REQUIRE(wait_exit(c.pid, 60s) == 0);
    const auto o = json::parse(out).as_object();
    // The initial measurement plus one before each of the two tg repetitions.
    CHECK(o.at("read_bandwidth_gbs").as_double() > 0);
    CHECK(o.at("read_bandwidth_min_gbs").as_double() <= o.at("read_bandwidth_gbs").as_double());
    CHECK(o.at("read_bandwidth_max_gbs").as_double() >= o.at("read_bandwidth_gbs").as_double());
    CHECK(o.at("weight_bytes_per_token").as_int64() > 0);
    // The engine's peak on a tiny model, not the 1 GiB buffer of the bandwidth probe.
    CHECK(o.at("peak_rss_mib").as_double() > 0);
    CHECK(o.at("peak_rss_mib").as_double() < 512);
    const auto & results = o.at("results").as_array();
    REQUIRE(results.size() == 2);
    CHECK(results[0].at("test").as_string() == "pp8");
    CHECK(results[1].at("test").as_string() == "tg4");
    for (const auto & r : results) {
        CHECK(r.at("tokens_per_s").as_double() > 0);
        CHECK(r.at("repetitions").as_int64() == 2);
    }
    CHECK(results[0].at("share_of_bandwidth_limit").as_double() == 0);   // pp has no bandwidth limit
    CHECK(results[1].at("share_of_bandwidth_limit").as_double() > 0);
}
