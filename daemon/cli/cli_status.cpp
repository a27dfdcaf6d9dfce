// `hearth status`: asks the running daemon for hearth/status over its Unix socket and prints
// it: the model, where its layers run (a GPU's plan or why the CPU), memory (mapped weights, KV
// budget and use), the KV slots (tokens held, bytes per slot, hit rate, persistence), the queue
// and the last completion's timings.
// A daemon that refuses the connection (limits.max-connections) says why in a
// window/showMessage before it closes; that reason is printed, and the exit code is 1, as
// for a connection that closes or breaks before the answer.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/json.hpp>
#include <poll.h>
#include <unistd.h>

#include "daemon/cli/cli_commands.h"
#include "daemon/settings/config.h"
#include "daemon/server/unix_client.h"
#include "lsp/framing.h"

namespace hearth::daemon {
namespace {

constexpr int k_answer_timeout_ms = 10000;

struct status_flags {
    std::optional<std::string> socket, runtime_dir, config;
    bool json = false;
};

// The daemon's side of the stream, split into messages by the daemon's own framing code.
struct reply_reader {
    lsp::frame_reader frames;
    std::deque<std::string> bodies;   // complete messages not looked at yet
    std::string refusal;              // an error the daemon showed before closing
};

// The text of a window/showMessage of type Error, or "".
std::string shown_error(const boost::json::object & m) {
    const auto * method = m.if_contains("method");
    const auto * params = m.if_contains("params");
    if (!method || !method->is_string() || method->as_string() != "window/showMessage" || !params || !params->is_object())
        return {};
    const auto * type = params->as_object().if_contains("type");
    const auto * text = params->as_object().if_contains("message");
    if (!type || !type->is_int64() || type->as_int64() != 1 || !text || !text->is_string()) return {};
    return std::string(text->as_string());
}

// Reads messages until the reply with `id` arrives (notifications and other replies are skipped).
result<boost::json::value> reply_to(int fd, int64_t id, reply_reader & in) {
    std::vector<lsp::frame_item> items;
    for (;;) {
        while (!in.bodies.empty()) {
            const std::string body = std::move(in.bodies.front());
            in.bodies.pop_front();
            boost::system::error_code ec;
            auto v = boost::json::parse(body, ec);
            if (ec || !v.is_object()) return fail("the daemon sent invalid JSON");
            const auto * mid = v.as_object().if_contains("id");
            if (mid && mid->is_int64() && mid->as_int64() == id) return v;
            if (auto why = shown_error(v.as_object()); !why.empty()) in.refusal = why;
        }
        // A daemon that is stopped (SIGSTOP) or wedged must not hang the command.
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, k_answer_timeout_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) return fail("the daemon did not answer within ", k_answer_timeout_ms / 1000, " s");
        char chunk[65536];
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 && !in.refusal.empty()) return fail("the daemon refused the connection: ", in.refusal);
        if (n < 0) return fail("the daemon closed the connection (", std::strerror(errno), ")");
        if (n == 0) return fail("the daemon closed the connection before it answered");
        items.clear();
        in.frames.feed(std::string_view(chunk, static_cast<size_t>(n)), items);
        for (auto & item : items) {
            if (auto * body = std::get_if<std::string>(&item)) in.bodies.push_back(std::move(*body));
            else return fail("the daemon's reply stream: ", std::get<lsp::framing_error>(item).message);
        }
    }
}

bool send(int fd, const boost::json::object & msg) {
    const std::string framed = lsp::frame_message(boost::json::serialize(msg));
    return write_all(fd, framed.data(), framed.size());
}

double num(const boost::json::object & o, const char * k) {
    const auto * v = o.if_contains(k);
    if (!v) return 0;
    if (v->is_int64()) return static_cast<double>(v->as_int64());
    if (v->is_uint64()) return static_cast<double>(v->as_uint64());
    if (v->is_double()) return v->as_double();
    return 0;
}

std::string str(const boost::json::object & o, const char * k) {
    const auto * v = o.if_contains(k);
    return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

// "3 end_of_generation, 1 time_cap" from {"end_of_generation": 3, "time_cap": 1, ...}; zeros left out.
std::string counts(const boost::json::object & o, const char * key) {
    const auto * v = o.if_contains(key);
    std::string out;
    if (!v || !v->is_object()) return "none";
    for (const auto & [name, n] : v->as_object()) {
        const double x = n.is_number() ? n.to_number<double>() : 0;
        if (x <= 0) continue;
        out += (out.empty() ? "" : ", ") + std::to_string(static_cast<uint64_t>(x)) + " " + std::string(name);
    }
    return out.empty() ? "none" : out;
}

// Why answers came back cut, trimmed or empty (completion_service::outcomes_json).
void print_outcomes(const boost::json::object & s) {
    const auto * v = s.if_contains("completionOutcomes");
    if (!v || !v->is_object()) return;
    const auto & o = v->as_object();
    std::printf("completion ends    %s\n", counts(o, "ends").c_str());
    std::printf("cleanup cut        %s\n", counts(o, "trimmed").c_str());
    std::printf("empty answers      %.0f (%s)\n", num(o, "empty"), counts(o, "emptyBecause").c_str());
    std::printf("prompt windows     %.0f shortened for the prompt budget\n", num(s, "promptWindowsShortened"));
}

// Where the layers run (services.cpp's "offload"): the device and what it holds, or why the CPU.
void print_offload(const boost::json::object & s) {
    const auto * v = s.if_contains("offload");
    if (!v || !v->is_object()) return;
    const auto & o = v->as_object();
    const double mib = 1024.0 * 1024.0;
    const double n_layer = num(o, "modelLayers"), n = num(o, "layers");
    if (!str(o, "backend").empty()) {
        std::printf("offload            %s %s: layers %.0f-%.0f of %.0f (--gpu-layers %s), %.1f MiB on the device "
                    "(weights %.1f, KV %.1f; %.1f planned for %.0f slots) of %.1f MiB\n",
                    str(o, "backend").c_str(), str(o, "device").c_str(), n_layer - n, n_layer - 1, n_layer,
                    str(o, "gpuLayers").c_str(), num(o, "deviceBytes") / mib, num(o, "deviceWeightBytes") / mib,
                    num(o, "deviceKvBytes") / mib, num(o, "plannedBytes") / mib, num(o, "plannedSlots"),
                    num(o, "deviceMemoryBytes") / mib);
    } else if (!str(o, "cpuReason").empty()) {
        std::printf("offload            none, all %.0f layers on the CPU (--gpu-layers %s): %s\n", n_layer,
                    str(o, "gpuLayers").c_str(), str(o, "cpuReason").c_str());
    } else {
        std::printf("offload            none, all %.0f layers on the CPU (--gpu-layers %s)\n", n_layer, str(o, "gpuLayers").c_str());
    }
}

void print_status(const boost::json::object & s) {
    const double mib = 1024.0 * 1024.0;
    std::printf("hearth %s\n", str(s, "version").c_str());
    std::printf("model              %s (%s, %.1f MiB mapped)\n", str(s, "model").c_str(), str(s, "modelPath").c_str(),
                num(s, "mappedBytes") / mib);
    if (const auto * e = s.if_contains("engine"); e && e->is_object() && str(e->as_object(), "kind") == "remote") {
        const auto & o = e->as_object();
        std::printf("engine             remote %s (%s), serving: %s; %.0f answered remotely, %.0f by the local fallback\n",
                    str(o, "remoteUrl").c_str(), str(o, "remoteApi").c_str(), str(o, "serving").c_str(), num(o, "remoteAnswers"),
                    num(o, "fallbacks"));
        if (!str(o, "lastError").empty())
            std::printf("remote last error  %s (%s)\n", str(o, "lastError").c_str(), str(o, "lastFailure").c_str());
    }
    print_offload(s);
    std::printf("compute            %.0f threads, KV cache %s, context %.0f\n", num(s, "threads"), str(s, "cacheType").c_str(),
                num(s, "contextLength"));
    std::printf("KV budget          %.1f MiB, %.1f MiB used\n", num(s, "kvBudgetBytes") / mib, num(s, "kvUsedBytes") / mib);
    std::printf("memory limit       %.1f MiB (%s)\n", num(s, "memoryLimitBytes") / mib, str(s, "memoryLimitSource").c_str());
    std::printf("KV slots           %.0f (room for %.0f at full context), %.0f tokens held, %.2f MiB per slot\n",
                num(s, "cacheSlotsUsed"), num(s, "cacheSlots"), num(s, "cacheTokensHeld"), num(s, "cacheBytesPerSlot") / mib);
    std::printf("KV reuse           hit rate %.0f%%, %.0f prompt tokens reused, %.0f evaluated, %.0f evictions\n",
                100.0 * num(s, "cacheHitRate"), num(s, "cacheTokensReused"), num(s, "cacheTokensEvaluated"),
                num(s, "cacheEvictions"));
    std::printf("slot files         %.0f written, %.0f read back, %.0f refused\n", num(s, "slotsSaved"), num(s, "slotsRestored"),
                num(s, "slotsRejected"));
    std::printf("completions        %.0f served (%.0f from the suggestion memory, %.0f prefetched), last %.1f ms\n",
                num(s, "completionsServed"), num(s, "completionsFromMemory"), num(s, "completionsPrefetched"),
                num(s, "lastCompletionMs"));
    const double answered = num(s, "completionsAnswered");
    std::printf("typing cost        %.1f prompt tokens evaluated per answered completion (cancelled keystrokes "
                "included; last %.0f)\n", answered > 0 ? num(s, "answerTokensEvaluated") / answered : 0.0,
                num(s, "lastAnswerTokensEvaluated"));
    std::printf("warm-ups           %.0f run, %.0f prompt tokens evaluated, %.0f skipped for want of KV room\n",
                num(s, "warmUps"), num(s, "warmUpTokens"), num(s, "warmUpsSkipped"));
    print_outcomes(s);
    std::printf("last request       %.0f prompt tokens (%.0f cached), %.0f generated; %.1f prompt t/s, %.1f generation t/s\n",
                num(s, "lastPromptTokens"), num(s, "lastCachedTokens"), num(s, "lastGeneratedTokens"),
                num(s, "promptTokensPerSecond"), num(s, "decodeTokensPerSecond"));
    std::printf("clients            %.0f connections, %.0f queued, %.0f chats served\n", num(s, "connections"),
                num(s, "queueDepth"), num(s, "chatsServed"));
}

int run_status(const status_flags & f) {
    std::signal(SIGPIPE, SIG_IGN);   // a daemon that closes on us is an EPIPE and a message, not a silent death
    daemon_config cfg;
    if (auto s = load_command_config(f.config, cfg); !s) {
        std::fprintf(stderr, "hearth status: %s\n", s.message().c_str());
        return 2;
    }
    const std::string socket = daemon_socket_path(f.socket, f.runtime_dir, cfg.socket_path, cfg.runtime_dir);
    const int fd = connect_unix(socket);
    if (fd < 0) {
        std::fprintf(stderr, "hearth status: no daemon is listening on %s (%s)\n", socket.c_str(), std::strerror(errno));
        return 1;
    }
    std::unique_ptr<int, void (*)(int *)> closer(new int(fd), [](int * p) { ::close(*p); delete p; });
    reply_reader replies;
    const bool sent = send(fd, {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
                                {"params", {{"processId", ::getpid()}, {"clientInfo", {{"name", "hearth status"}}},
                                            {"capabilities", boost::json::object{}}}}}) &&
                      send(fd, {{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", boost::json::object{}}}) &&
                      send(fd, {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "hearth/status"}});
    if (!sent) {
        // The daemon closed first; it may have said why before it did.
        const int err = errno;
        auto why = reply_to(fd, 1, replies);
        if (!replies.refusal.empty()) std::fprintf(stderr, "hearth status: %s: %s\n", socket.c_str(), why.message().c_str());
        else std::fprintf(stderr, "hearth status: the daemon on %s closed the connection (%s)\n", socket.c_str(), std::strerror(err));
        return 1;
    }
    auto init = reply_to(fd, 1, replies);
    auto st = init ? reply_to(fd, 2, replies) : init;
    if (!st) {
        std::fprintf(stderr, "hearth status: %s: %s\n", socket.c_str(), st.message().c_str());
        return 1;
    }
    const auto * result = st->as_object().if_contains("result");
    if (!result || !result->is_object()) {
        std::fprintf(stderr, "hearth status: the daemon answered %s\n", boost::json::serialize(*st).c_str());
        return 1;
    }
    if (f.json) std::printf("%s\n", boost::json::serialize(*result).c_str());
    else print_status(result->as_object());
    (void)send(fd, {{"jsonrpc", "2.0"}, {"id", 3}, {"method", "shutdown"}});
    (void)reply_to(fd, 3, replies);
    (void)send(fd, {{"jsonrpc", "2.0"}, {"method", "exit"}});
    return 0;
}

}  // namespace

void add_status_command(CLI::App & app, cli_state & state) {
    auto * cmd = app.add_subcommand("status", "Show the running daemon's model, memory, KV slots and timings");
    auto f = std::make_shared<status_flags>();
    cmd->add_option("--socket", f->socket, "The daemon's Unix socket");
    cmd->add_option("--runtime-dir", f->runtime_dir, "The daemon's runtime directory");
    cmd->add_option("--config", f->config, "Config file (default ~/.config/hearth/config.toml)");
    cmd->add_flag("--json", f->json, "Print hearth/status's JSON");
    cmd->callback([f, &state] { state.exit_code = run_status(*f); });
}

}  // namespace hearth::daemon
