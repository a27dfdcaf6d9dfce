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

#include "tests/daemon/hearth_process.h"
#include "tests/daemon/test_client.h"

using namespace hearth::daemon::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

constexpr auto k_reply_within = 20s;

const std::string k_model = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-Q8_0.gguf";

void init(test_client & c) {
    REQUIRE(c.request(1, "initialize", json::object{{"capabilities", json::object{}}}));
    ok_result(c, 1, k_reply_within);
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
    const auto items = ok_result(c, 2, k_reply_within).at("items").as_array();
    REQUIRE_FALSE(items.empty());
    CHECK_FALSE(items[0].at("insertText").as_string().empty());
    CHECK(items[0].at("range").at("start").at("character").as_int64() == 4);
    json::object chat{{"textDocument", {{"uri", "file:///s.py"}}},
                      {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 1}, {"character", 0}}}}},
                      {"prompt", "What happens next?"}};
    REQUIRE(c.request(3, "hearth/chat", chat));
    CHECK(ok_result(c, 3, k_reply_within).at("text").is_string());
    REQUIRE(c.request(4, "hearth/status"));
    auto st = ok_result(c, 4, k_reply_within);
    CHECK(st.at("mappedBytes").as_int64() == 379168);   // the Q8_0 fixture's size
    CHECK_FALSE(st.at("model").as_string().empty());
    REQUIRE(c.request(5, "shutdown"));
    ok_result(c, 5, k_reply_within);
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
    ok_result(c, 2, k_reply_within);
    REQUIRE(c.request(3, "hearth/status"));
    auto st = ok_result(c, 3, k_reply_within);
    if (close_first) REQUIRE(c.notify("textDocument/didClose", json::object{{"textDocument", {{"uri", "file:///story.txt"}}}}));
    REQUIRE(c.request(4, "shutdown"));
    ok_result(c, 4, k_reply_within);
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
    CHECK(ok_result(c, 1, k_reply_within).at("capabilities").is_object());
    CHECK(ok_result(c, 2, k_reply_within).at("connections").as_int64() == 1);
    CHECK(ok_result(c, 3, k_reply_within).is_null());
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
    auto c = connect_unix_when_up(sock, 10s);   // the daemon is starting
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
    const auto st = ok_result(ca, 2, k_reply_within);
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
    // An editor closing its stdin ends only its own shim (exit code 1: no shutdown was sent).
    ca.close_write();
    CHECK(wait_exit(a.pid) == 1);
    REQUIRE(cb.request(3, "hearth/status"));
    CHECK(ok_result(cb, 3, k_reply_within).at("connections").as_int64() == 1);
    // The daemon stopping ends the other shim, which tells its editor it did not choose to.
    ::kill(daemon_pid, SIGTERM);
    CHECK(cb.wait_closed(10s));
    CHECK(wait_exit(b.pid) == 1);
    CHECK(slurp(dir + "/b.log").find("the daemon closed the connection") != std::string::npos);
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

TEST_CASE("hearth daemon: a FIFO in place of a slot file stalls neither completions nor SIGTERM", "[daemon][binary][security]") {
    const std::string dir = temp_dir();
    const std::string text = "Once upon a time, there was a little girl named Lily. She loved to play outside. One day";
    complete_in_fresh_daemon(dir, text, false);   // writes the document's slot file at the stop
    const auto files = slot_files(dir + "/slots");
    REQUIRE(files.size() == 1);
    std::filesystem::remove(files[0]);
    REQUIRE(::mkfifo(files[0].c_str(), 0600) == 0);

    child ch = spawn_stdio_daemon(dir);
    test_client c(ch.from_child, ch.to_child);
    init(c);
    REQUIRE(c.notify("textDocument/didOpen", doc_open("file:///story.txt", text)));
    json::object p{{"textDocument", {{"uri", "file:///story.txt"}}},
                   {"position", {{"line", 0}, {"character", static_cast<int64_t>(text.size())}}},
                   {"context", {{"triggerKind", 2}}}};
    REQUIRE(c.request(2, "textDocument/inlineCompletion", p));
    auto r = c.reply_to(2, 5s);
    INFO(slurp(dir + "/stderr.log"));
    CHECK(r);   // answered (cold), the FIFO refused
    const auto t0 = std::chrono::steady_clock::now();
    ::kill(ch.pid, SIGTERM);
    const int code = wait_exit(ch.pid, 5s);
    CHECK(code < 128);
    CHECK(std::chrono::steady_clock::now() - t0 < 2s);
    CHECK(std::filesystem::is_regular_file(files[0]));   // the slot written again, as a file
    CHECK(slurp(dir + "/stderr.log").find("not a regular file") != std::string::npos);
}

TEST_CASE("hearth daemon: temporaries left by a save killed mid-write are removed at start", "[daemon][binary]") {
    const std::string dir = temp_dir();
    const std::string text = "Once upon a time, there was a little girl named Lily. She loved to play outside. One day";
    complete_in_fresh_daemon(dir, text, false);
    const auto files = slot_files(dir + "/slots");
    REQUIRE(files.size() == 1);
    // What SIGKILL during the save at a stop leaves: <hash>.slot.tmp<pid of the dead daemon>.
    const std::string stale = files[0] + ".tmp4194305";
    std::ofstream(stale) << std::string(100000, 'x');
    complete_in_fresh_daemon(dir, text, false);
    CHECK_FALSE(std::filesystem::exists(stale));
    CHECK(slot_files(dir + "/slots").size() == 1);
}

namespace {

// `hearth daemon` without a model (it still serves the protocol), on <dir>/run/hearth.sock.
child spawn_plain_daemon(const std::string & dir) {
    std::ofstream(dir + "/empty.toml").flush();
    child d = spawn({"daemon", "--runtime-dir", dir + "/run", "--log-file", "none", "--config", dir + "/empty.toml"},
                    dir + "/daemon.log");
    for (int i = 0; i < 1000 && !test_client::connect_unix(dir + "/run/hearth.sock"); ++i) std::this_thread::sleep_for(10ms);
    return d;
}

child spawn_shim(const std::string & dir) {
    return spawn({"lsp", "--no-start", "--runtime-dir", dir + "/run", "--config", dir + "/empty.toml"}, dir + "/shim.log");
}

}  // namespace

TEST_CASE("hearth lsp: the exit code says how the session ended", "[daemon][binary]") {
    const std::string dir = temp_dir();
    child d = spawn_plain_daemon(dir);
    child shim = spawn_shim(dir);
    test_client c(shim.from_child, shim.to_child);
    init(c);
    INFO(slurp(dir + "/shim.log"));
    SECTION("shutdown, then exit: 0") {
        REQUIRE(c.request(2, "shutdown"));
        ok_result(c, 2, k_reply_within);
        REQUIRE(c.notify("exit"));
        CHECK(wait_exit(shim.pid) == 0);
    }
    SECTION("exit without shutdown: 1, as the LSP says (and as hearth daemon --stdio does)") {
        REQUIRE(c.notify("exit"));
        CHECK(wait_exit(shim.pid) == 1);
    }
    SECTION("the editor closing the pipe without shutdown: 1") {
        c.close_write();
        CHECK(wait_exit(shim.pid) == 1);
    }
    SECTION("the daemon killed under it: 1, with a message") {
        ::kill(d.pid, SIGKILL);
        wait_exit(d.pid);
        d.pid = -1;
        CHECK(wait_exit(shim.pid) == 1);
        CHECK(slurp(dir + "/shim.log").find("the daemon closed the connection") != std::string::npos);
    }
    if (d.pid > 0) {
        ::kill(d.pid, SIGTERM);
        wait_exit(d.pid);
    }
}

TEST_CASE("hearth daemon: a model file truncated under it is a logged exit, not a silent SIGBUS", "[daemon][binary]") {
    const std::string dir = temp_dir();
    const std::string model = dir + "/model.gguf";
    std::filesystem::copy_file(k_model, model);
    auto args = daemon_args(dir);
    for (auto & a : args) if (a == k_model) a = model;
    for (size_t i = 0; i + 1 < args.size(); ++i) if (args[i] == "--log-file") args[i + 1] = dir + "/daemon.log";
    args.push_back("--stdio");
    child ch = spawn(args, dir + "/stderr.log");
    test_client c(ch.from_child, ch.to_child);
    init(c);
    REQUIRE(c.notify("textDocument/didOpen", doc_open("file:///s.txt", "Once upon a time")));
    json::object chat{{"textDocument", {{"uri", "file:///s.txt"}}},
                      {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 4}}}}},
                      {"prompt", "What happens next?"}};
    REQUIRE(c.request(2, "hearth/chat", chat));
    ok_result(c, 2, k_reply_within);
    // Cut in place (same inode, as `truncate` or an editor saving over it would), then ask again.
    std::filesystem::resize_file(model, 4096);
    REQUIRE(c.request(3, "hearth/chat", chat));
    const int code = wait_exit(ch.pid);
    const std::string err = slurp(dir + "/stderr.log"), log = slurp(dir + "/daemon.log");
    INFO("stderr: " << err << "\nlog: " << log);
    CHECK(code == 74);   // EX_IOERR, not 128 + SIGBUS
    CHECK(err.find("model file '" + model + "' changed under the daemon") != std::string::npos);
    CHECK(log.find("model file '" + model + "' changed under the daemon") != std::string::npos);
}
