// The real `hearth` binary with layers on a GPU (Mesa's lavapipe in CI): a daemon started with
// --gpu-layers serves the CPU daemon's inline completions, with KV reuse across edits and its
// slots across a restart; `hearth status` and hearth/status show the plan; `hearth model info
// --gpu-layers` prints it; a device that fails to open gives a log line and the CPU path.
// The tests that need a device are tagged [vulkan] (hidden: the daemon_vulkan ctest runs them)
// and skip with a warning where no Vulkan device can take the layers.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "daemon/cli/gpu_probe.h"
#include "daemon/engine/model_service.h"
#include "tests/daemon/hearth_process.h"
#include "tests/daemon/test_client.h"
#include "tests/default_model.h"
#include "tests/skip.h"

using namespace hearth::daemon;
using namespace hearth::daemon::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

constexpr auto k_reply_within = 120s;

// F32 weights: the device's greedy tokens are the CPU's on every golden prompt (docs/gpu.md).
const std::string k_model = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf";

// A loader with no driver behind it: the device cannot open.
const std::vector<std::string> k_no_driver = {"VK_ICD_FILENAMES=/nonexistent/icd.json"};

// The tiny model's head size (8) takes no q8_0 cache; its slots go under <dir>/slots. Answers end
// at 16 tokens or a stop, never at a time budget: lavapipe is far slower than the CPU.
std::vector<std::string> daemon_args(const std::string & dir, const std::vector<std::string> & extra) {
    std::ofstream(dir + "/hearth.toml") << "cache-type = \"f16\"\nslot-dir = \"" << dir
                                        << "/slots\"\n[completion]\nprefetch = false\nmax-tokens = 16\n"
                                           "prompt-budget-ms = 600000\ntime-budget-ms = 600000\ntime-cap-ms = 600000\n";
    std::vector<std::string> args = {"daemon", "--model", k_model, "--runtime-dir", dir + "/run", "--log-file", "none",
                                     "--log-level", "info", "--threads", "1", "--config", dir + "/hearth.toml"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

std::string run_to_end(const std::vector<std::string> & args, const std::string & log,
                       const std::vector<std::string> & env = {}, int * exit_code = nullptr) {
    child c = spawn(args, log, env);
    ::close(c.to_child);
    const std::string out = read_to_end(c.from_child);
    const int rc = wait_exit(c.pid, 30s);
    if (exit_code) *exit_code = rc;
    return out;
}

// What one daemon answered over an editor's session on the story.
struct session {
    std::vector<std::string> texts;   // the first item's insertText per completion
    json::object status;              // hearth/status at the end
    std::string status_text;          // `hearth status` at the end
    std::string log;                  // the daemon's stderr
    std::string maps;                 // /proc/<pid>/maps once it answered initialize: the libraries it loaded
};

json::object doc(const std::string & text, int64_t version) {
    return {{"uri", "file:///story.txt"}, {"languageId", "plaintext"}, {"version", version}, {"text", text}};
}

// Starts `hearth daemon` on its socket, opens the story, completes at its end, types at the end
// and completes, edits its middle and completes, asks hearth/status and `hearth status`, and
// stops it with SIGTERM (which writes the slot).
session edit_session(const std::string & dir, const std::vector<std::string> & extra,
                     const std::vector<std::string> & env = {}) {
    std::filesystem::remove(dir + "/stderr.log");
    child ch = spawn(daemon_args(dir, extra), dir + "/stderr.log", env);
    const std::string sock = dir + "/run/hearth.sock";
    // The daemon is starting (opening a device takes a while on lavapipe).
    auto c = connect_unix_when_up(sock, 60s);
    INFO(slurp(dir + "/stderr.log"));
    REQUIRE(c);
    REQUIRE(c->request(1, "initialize", json::object{{"capabilities", json::object{}}}));
    ok_result(*c, 1, k_reply_within);
    REQUIRE(c->notify("initialized"));

    session out;
    out.maps = slurp("/proc/" + std::to_string(ch.pid) + "/maps");
    int64_t id = 2;
    const auto complete_at_end = [&](const std::string & text) {
        json::object p{{"textDocument", {{"uri", "file:///story.txt"}}},
                       {"position", {{"line", 0}, {"character", static_cast<int64_t>(text.size())}}},
                       {"context", {{"triggerKind", 2}}}};
        REQUIRE(c->request(id, "textDocument/inlineCompletion", p));
        const auto items = ok_result(*c, id++, k_reply_within).at("items").as_array();
        out.texts.push_back(items.empty() ? std::string() : std::string(items[0].at("insertText").as_string()));
    };
    const std::string t1 = "Once upon a time, there was a little girl named Lily. She loved to play outside. One day";
    const std::string t2 = t1 + ", she saw a big";
    std::string t3 = t2;
    t3.replace(t3.find("Lily"), 4, "Sue");
    REQUIRE(c->notify("textDocument/didOpen", json::object{{"textDocument", doc(t1, 1)}}));
    complete_at_end(t1);
    REQUIRE(c->notify("textDocument/didChange", json::object{{"textDocument", {{"uri", "file:///story.txt"}, {"version", 2}}},
                                                             {"contentChanges", json::array{json::object{{"text", t2}}}}}));
    complete_at_end(t2);
    REQUIRE(c->notify("textDocument/didChange", json::object{{"textDocument", {{"uri", "file:///story.txt"}, {"version", 3}}},
                                                             {"contentChanges", json::array{json::object{{"text", t3}}}}}));
    complete_at_end(t3);
    REQUIRE(c->request(id, "hearth/status"));
    out.status = ok_result(*c, id++, k_reply_within).as_object();
    out.status_text = run_to_end({"status", "--socket", sock}, dir + "/status.log");
    ::kill(ch.pid, SIGTERM);
    CHECK(wait_exit(ch.pid, 30s) == 0);
    out.log = slurp(dir + "/stderr.log");
    return out;
}

const json::object & offload_of(const session & s) { return s.status.at("offload").as_object(); }

// A device took the layers; else the case is skipped, with the reason.
bool offloaded_or_skip(const session & s) {
    const auto & o = offload_of(s);
    if (!o.at("backend").as_string().empty()) return true;
    ::hearth::test::skip("no GPU device took the layers here: " + std::string(o.at("cpuReason").as_string()));
    return false;
}

}  // namespace

TEST_CASE("hearth daemon --gpu-layers all, then 2: the CPU daemon's completions, KV reuse across edits, slots across "
          "a restart, the plan in hearth status", "[daemon][binary][.vulkan]") {
    const std::string cpu_dir = temp_dir(), gpu_dir = temp_dir();
    const session cpu = edit_session(cpu_dir, {"--gpu-layers", "0"});
    const session gpu = edit_session(gpu_dir, {"--gpu-layers", "all"});
    INFO(gpu.log);
    if (!offloaded_or_skip(gpu)) return;
    const auto & o = offload_of(gpu);
    CHECK(o.at("backend").as_string() == "Vulkan");
    CHECK(o.at("layers").as_int64() == 5);
    CHECK(o.at("firstLayer").as_int64() == 0);
    CHECK(o.at("gpuLayers").as_string() == "all");
    CHECK(o.at("deviceWeightBytes").as_int64() > 0);
    CHECK(o.at("deviceKvBytes").as_int64() > 0);   // the slot's rows of every layer live there
    CHECK(o.at("deviceBytes").as_int64() == o.at("deviceWeightBytes").as_int64() + o.at("deviceKvBytes").as_int64());
    CHECK(o.at("cpuReason").as_string().empty());
    CHECK(gpu.log.find("GPU offload: layers 0-4 of 5 and the output on vulkan") != std::string::npos);

    // Greedy, so the device's answers are the CPU's, and the cache kept the same positions.
    CHECK(gpu.texts == cpu.texts);
    CHECK_FALSE(gpu.texts[0].empty());
    CHECK(gpu.status.at("cacheTokensReused").as_int64() > 0);
    CHECK(gpu.status.at("cacheTokensReused") == cpu.status.at("cacheTokensReused"));
    CHECK(gpu.status.at("cacheTokensEvaluated") == cpu.status.at("cacheTokensEvaluated"));
    CHECK(gpu.status.at("completionsServed") == cpu.status.at("completionsServed"));

    // `hearth status` prints where the layers run.
    INFO(gpu.status_text);
    CHECK(gpu.status_text.find("offload            Vulkan vulkan: ") != std::string::npos);
    CHECK(gpu.status_text.find("layers 0-4 of 5 (--gpu-layers all)") != std::string::npos);
    INFO(cpu.status_text);
    CHECK(cpu.status_text.find("offload            none, all 5 layers on the CPU (--gpu-layers 0)") != std::string::npos);

    // Restarted on the same slots with only the last two layers on the device: the story comes
    // back from disk, its rows of those layers onto the device, and the answers are the CPU's.
    const session again = edit_session(gpu_dir, {"--gpu-layers", "2"});
    INFO(again.log);
    const auto & o2 = offload_of(again);
    CHECK(o2.at("layers").as_int64() == 2);
    CHECK(o2.at("firstLayer").as_int64() == 3);
    CHECK(o2.at("deviceKvBytes").as_int64() > 0);
    CHECK(o2.at("deviceKvBytes").as_int64() < o.at("deviceKvBytes").as_int64());
    CHECK(again.status.at("slotsRestored").as_int64() == 1);
    CHECK(again.texts == cpu.texts);
    CHECK(again.status.at("cacheTokensReused").as_int64() > gpu.status.at("cacheTokensReused").as_int64());
    INFO(again.status_text);
    CHECK(again.status_text.find("layers 3-4 of 5 (--gpu-layers 2)") != std::string::npos);
}

TEST_CASE("hearth daemon without a driver: auto (the default) and all say why in a log line, the CPU's completions",
          "[daemon][binary]") {
    const session cpu = edit_session(temp_dir(), {}, k_no_driver);
    const session gpu = edit_session(temp_dir(), {"--gpu-layers", "all"}, k_no_driver);
    {
        // auto finds no GPU: one line at info level, not a warning; the reason in the status.
        INFO(cpu.log);
        const auto & o = offload_of(cpu);
        CHECK(o.at("gpuLayers").as_string() == "auto");
        CHECK(o.at("backend").as_string().empty());
        const std::string why(o.at("cpuReason").as_string());
        CHECK_FALSE(why.empty());
        CHECK(cpu.log.find("GPU offload: auto: none (" + why + ")") != std::string::npos);
        CHECK(cpu.log.find("GPU offload (--gpu-layers") == std::string::npos);
        INFO(cpu.status_text);
        CHECK(cpu.status_text.find("offload            none, all 5 layers on the CPU (--gpu-layers auto): " + why) !=
              std::string::npos);
    }
    INFO(gpu.log);
    const auto & o = offload_of(gpu);
    CHECK(o.at("backend").as_string().empty());
    CHECK(o.at("layers").as_int64() == 0);
    CHECK(o.at("deviceBytes").as_int64() == 0);
    CHECK(o.at("gpuLayers").as_string() == "all");
    // No Vulkan device (this loader has no driver), or no GPU backend in this build.
    const std::string why(o.at("cpuReason").as_string());
    CHECK(why.find("running on the CPU") != std::string::npos);
    CHECK(gpu.log.find("GPU offload (--gpu-layers all): " + why) != std::string::npos);
    CHECK(gpu.log.find("critical") == std::string::npos);
    CHECK(gpu.texts == cpu.texts);
    INFO(gpu.status_text);
    CHECK(gpu.status_text.find("offload            none, all 5 layers on the CPU (--gpu-layers all): " + why) !=
          std::string::npos);
}

TEST_CASE("hearth daemon, auto where the only Vulkan device is a CPU device: probed in a child, no driver loaded "
          "in the daemon, the reason in the status", "[daemon][binary][.vulkan]") {
    const session s = edit_session(temp_dir(), {});
    INFO(s.log);
    const auto & o = offload_of(s);
    if (!o.at("backend").as_string().empty()) HEARTH_SKIP("auto chose a GPU here: " << o.at("device").as_string());
    const std::string why(o.at("cpuReason").as_string());
    if (why.find(" is a CPU device") == std::string::npos) HEARTH_SKIP("no Vulkan CPU device here: " << why);
    CHECK(s.log.find("GPU offload: auto: none (" + why + ")") != std::string::npos);
    // The probe loaded the driver in its own process; the daemon mapped no Vulkan library.
    CHECK(s.maps.find("vulkan") == std::string::npos);
    CHECK(s.maps.find("LLVM") == std::string::npos);
    CHECK_FALSE(s.texts[0].empty());
}

TEST_CASE("hearth devices: each backend's devices or why none; --probe's lines are what the daemon's probe reads",
          "[daemon][binary]") {
    const std::string dir = temp_dir();
    for (const auto & env : {std::vector<std::string>{}, k_no_driver}) {
        int rc = -1;
        const std::string probe = run_to_end({"devices", "--probe"}, dir + "/probe.log", env, &rc);
        INFO(probe);
        CHECK(rc == 0);
        size_t lines = 0;
        bool gpu = false;
        for (size_t start = 0; start < probe.size();) {
            const size_t nl = probe.find('\n', start);
            auto line = parse_probe_line(std::string_view(probe).substr(start, nl - start));
            REQUIRE(line.has_value());
            ++lines;
            gpu = gpu || line->kind == "gpu";
            CHECK_FALSE(line->name.empty());
            start = nl + 1;
        }
        CHECK(lines > 0);
        // What the daemon concludes from it.
        const auto none = no_gpu_reason(probe);
        CHECK(none.has_value() == !gpu);
        if (!env.empty()) {   // no driver: the Vulkan line says why, or the build has no Vulkan
            CHECK_FALSE(gpu);
            CHECK((probe.find("Vulkan\tnone\t0\t") != std::string::npos || probe.find("none\tnone") == 0 ||
                   probe.find("CUDA\t") == 0));
        }
        const std::string shown = run_to_end({"devices"}, dir + "/devices.log", env, &rc);
        INFO(shown);
        CHECK(rc == 0);
        CHECK_FALSE(shown.empty());
        if (probe.find("\tcpu\t") != std::string::npos) CHECK(shown.find("CPU device: auto skips it") != std::string::npos);
    }
}

TEST_CASE("hearth complete --gpu-layers all on a device that shares the host's memory: the weights are read in "
          "place, not a second resident copy", "[daemon][binary][.vulkan][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(model);
    const std::string dir = temp_dir();
    // The peak resident set of one short completion, in bytes (wait4's ru_maxrss).
    const auto peak = [&](const char * layers, const std::vector<std::string> & env) {
        std::filesystem::remove(dir + "/complete.log");
        child c = spawn({"complete", "--model", model, "--gpu-layers", layers, "--threads", "2", "-n", "1", "--ctx", "256",
                         "-v", "--prompt", "def add(a, b):"}, dir + "/complete.log", env);
        ::close(c.to_child);
        const std::string out = read_to_end(c.from_child);
        int st = 0;
        rusage ru{};
        REQUIRE(::wait4(c.pid, &st, 0, &ru) == c.pid);
        INFO(slurp(dir + "/complete.log"));
        REQUIRE(WIFEXITED(st));
        REQUIRE(WEXITSTATUS(st) == 0);
        return static_cast<double>(ru.ru_maxrss) * 1024.0;
    };
    const double cpu = peak("0", {});
    const double imported = peak("all", {});
    if (slurp(dir + "/complete.log").find("offload: layers") == std::string::npos)
        HEARTH_SKIP("no Vulkan device took the layers here: " << slurp(dir + "/complete.log"));
    const double copied = peak("all", {"HEARTH_VULKAN_IMPORT_HOST=0"});
    const double weights = static_cast<double>(std::filesystem::file_size(model));
    std::printf("peak RSS, default model (%.0f MiB file): CPU %.0f MiB, every layer on %s with the weights imported "
                "%.0f MiB, copied %.0f MiB\n", weights / (1 << 20), cpu / (1 << 20), "Vulkan", imported / (1 << 20),
                copied / (1 << 20));
    // Copied, the device's memory (host memory on lavapipe) holds the weights a second time.
    CHECK(copied - imported > weights / 2);
    // Imported: the CPU run's resident set plus the driver's own, no second copy.
    CHECK(imported - cpu < weights / 2);
}

TEST_CASE("gpu probe: its lines read, and the reason auto gives from them", "[daemon]") {
    CHECK_FALSE(parse_probe_line("Vulkan\tgpu\t17179869184").has_value());          // three fields
    CHECK_FALSE(parse_probe_line("Vulkan\tmaybe\t0\tx").has_value());               // an unknown kind
    CHECK_FALSE(parse_probe_line("").has_value());
    const auto l = parse_probe_line("Vulkan\tcpu\t25275338752\tllvmpipe (LLVM 15.0.6, 256 bits)");
    REQUIRE(l.has_value());
    CHECK(l->backend == "Vulkan");
    CHECK(l->kind == "cpu");
    CHECK(l->name == "llvmpipe (LLVM 15.0.6, 256 bits)");
    CHECK(no_gpu_reason("Vulkan\tcpu\t1\tllvmpipe (LLVM 15.0.6, 256 bits)\n") ==
          "no Vulkan GPU: llvmpipe (LLVM 15.0.6, 256 bits) is a CPU device");
    CHECK(no_gpu_reason("CUDA\tnone\t0\tno CUDA device: no driver (error 35)\nVulkan\tcpu\t1\tllvmpipe\n") ==
          "no CUDA device: no driver (error 35); no Vulkan GPU: llvmpipe is a CPU device");
    CHECK_FALSE(no_gpu_reason("CUDA\tnone\t0\tno CUDA device\nVulkan\tgpu\t8\tRadeon 780M\n").has_value());
    CHECK(no_gpu_reason("Segmentation fault\n") == "the GPU probe said nothing");
}

TEST_CASE("engine service with gpu-layers all: the device's answer is the CPU's; an f32 cache is refused, said in the "
          "status", "[daemon][binary][.vulkan]") {
    const auto service = [](const char * cache_type, const char * gpu_layers) {
        engine_options o;
        o.model_path = k_model;
        o.cache_type = cache_type;
        o.gpu_layers = gpu_layers;
        o.n_threads = 1;
        o.n_ctx = 512;
        auto s = make_engine_model_service(o);
        REQUIRE(s.has_value());
        return std::move(*s);
    };
    fim_request r;
    r.uri = "file:///story.txt";
    r.prefix = "Once upon a time, there was a little girl named Lily. She";
    r.mode = completion_mode::multi_line;
    r.n_predict = 8;
    r.time_budget = 600s;
    r.time_cap = 600s;
    auto gpu = service("f16", "all");
    const offload_status o = gpu->status().offload;
    if (o.backend.empty()) HEARTH_SKIP("no GPU device took the layers here: " << o.cpu_reason);
    CHECK(o.n_layers == 5);
    CHECK(o.planned_slots == 4);
    CHECK(o.planned_bytes > o.weight_bytes);
    CHECK(o.kv_bytes == 0);   // no slot yet
    auto want = service("f16", "0")->complete(r, {}, {});
    auto got = gpu->complete(r, {}, {});
    REQUIRE(want.has_value());
    REQUIRE(got.has_value());
    REQUIRE_FALSE(want->candidates.empty());
    REQUIRE_FALSE(got->candidates.empty());
    CHECK(got->candidates[0].text == want->candidates[0].text);
    CHECK(gpu->status().offload.kv_bytes > 0);
    CHECK(gpu->status().offload.cpu_reason.empty());

    // The default, auto, on a CPU device (lavapipe): every layer on the CPU, and why.
    const offload_status automatic = service("f16", "auto")->status().offload;
    INFO(automatic.cpu_reason);
    if (automatic.backend.empty()) CHECK(automatic.cpu_reason.find(" is a CPU device") != std::string::npos);
    else WARN("auto chose " << automatic.device << ": a GPU here");

    // An f32 cache the device does not take: every layer on the CPU, the reason in the status.
    auto f32 = service("f32", "all");
    const offload_status refused = f32->status().offload;
    CHECK(refused.backend.empty());
    CHECK(refused.n_layers == 0);
    CHECK(refused.gpu_layers == "all");
    CHECK(refused.cpu_reason.find("cannot hold a KV cache of f32") != std::string::npos);
    auto cpu_f32 = service("f32", "0")->complete(r, {}, {});
    auto got_f32 = f32->complete(r, {}, {});
    REQUIRE(cpu_f32.has_value());
    REQUIRE(got_f32.has_value());
    REQUIRE_FALSE(cpu_f32->candidates.empty());
    REQUIRE_FALSE(got_f32->candidates.empty());
    CHECK(got_f32->candidates[0].text == cpu_f32->candidates[0].text);
}

TEST_CASE("hearth model info --gpu-layers: the plan per device, auto under a capped memory, no driver",
          "[daemon][binary][.vulkan]") {
    const std::string dir = temp_dir();
    int rc = -1;
    const std::string json_text = run_to_end({"model", "info", k_model, "--gpu-layers", "all", "--ctx", "256", "--files",
                                              "2", "--json"}, dir + "/json.log", {}, &rc);
    INFO(json_text << slurp(dir + "/json.log"));
    CHECK(rc == 0);
    const auto j = json::parse(json_text).at("gpu_offload").as_object();
    if (j.at("chosen").is_null()) HEARTH_SKIP("no Vulkan device here: " << j.at("cpu_reason").as_string());
    CHECK(j.at("chosen").as_string() == "Vulkan");
    CHECK(j.at("gpu_layers").as_string() == "all");
    CHECK(j.at("slots").as_int64() == 2);
    CHECK(j.at("context").as_int64() == 256);
    const json::object * plan = nullptr;
    for (const auto & b : j.at("backends").as_array())
        if (b.at("chosen").as_bool()) plan = &b.at("plan").as_object();
    REQUIRE(plan);
    CHECK(plan->at("layers").as_int64() == 5);
    CHECK(plan->at("first_layer").as_int64() == 0);
    // stories260K-F32: per layer 64x64 Q and O, 32x64 K and V, three 172x64 feed-forward f32
    // matrices and two 64-float norms; K and V of 32 f16 per position for 2 slots of 256.
    CHECK(plan->at("weights_bytes").as_int64() == 5 * ((2 * 64 * 64 + 2 * 32 * 64 + 3 * 172 * 64 + 2 * 64) * 4));
    CHECK(plan->at("kv_bytes").as_int64() == 5 * 2 * 256 * 2 * 32 * 2);
    // Every layer, so the output too: its 512x64 f32 matrix, norm and 16 rows of 512 logits.
    CHECK(plan->at("output_on_device").as_bool());
    CHECK(plan->at("output_bytes").as_int64() == (512 * 64 + 64 + 16 * 512) * 4);
    CHECK(plan->at("total_bytes").as_int64() == plan->at("weights_bytes").as_int64() + plan->at("output_bytes").as_int64() +
                                                   plan->at("kv_bytes").as_int64() + plan->at("compute_bytes").as_int64());

    // `auto` on a CPU device (lavapipe): nothing, and why.
    if (plan->at("cpu_device").as_bool()) {
        const std::string cpu = run_to_end({"model", "info", k_model, "--gpu-layers", "auto"}, dir + "/cpu.log");
        INFO(cpu);
        CHECK(cpu.find("  Vulkan: not available: no Vulkan GPU: ") != std::string::npos);
        CHECK(cpu.find(" is a CPU device\n") != std::string::npos);
        CHECK(cpu.find("  every layer (5) runs on the CPU: no Vulkan GPU: ") != std::string::npos);
    } else {
        // `auto` within a memory that holds the compute buffers and two and a half layers: two
        // layers, printed per device with why not more.
        const int64_t one_layer = (plan->at("weights_bytes").as_int64() + plan->at("kv_bytes").as_int64()) / 5;
        const int64_t cap = static_cast<int64_t>(static_cast<double>(plan->at("compute_bytes").as_int64() + 5 * one_layer / 2) / 0.8);
        const std::string capped = run_to_end({"model", "info", k_model, "--gpu-layers", "auto", "--ctx", "256", "--files", "2",
                                               "--gpu-memory", std::to_string(cap)}, dir + "/auto.log");
        INFO(capped);
        CHECK(capped.find("GPU offload (--gpu-layers auto; room for 2 slots of 256 positions, f16 KV cache, batch 256)") !=
              std::string::npos);
        CHECK(capped.find("  Vulkan: vulkan: ") != std::string::npos);
        CHECK(capped.find("(chosen)") != std::string::npos);
        CHECK(capped.find("2 of 5 on the device: 3-4; on the CPU: 0-2\n") != std::string::npos);
        CHECK(capped.find("weights            355.00 KiB\n") != std::string::npos);
        CHECK(capped.find("KV cache           128.00 KiB (f16, 2 slots of 256 positions)\n") != std::string::npos);
        CHECK(capped.find("auto chose         2 layers: 2 of 5 layers fit in") != std::string::npos);
        CHECK(capped.find(", capped)") != std::string::npos);
    }

    // No driver: the reason and every layer on the CPU, after the CPU's RAM estimate.
    const std::string none = run_to_end({"model", "info", k_model, "--gpu-layers", "auto"}, dir + "/none.log", k_no_driver, &rc);
    INFO(none);
    CHECK(rc == 0);
    CHECK(none.find("estimated peak RAM") != std::string::npos);
    // auto asks for a GPU (a CPU device is refused as none).
    CHECK(none.find("  Vulkan: not available: no Vulkan GPU: ") != std::string::npos);
    CHECK(none.find("  every layer (5) runs on the CPU: no Vulkan GPU: ") != std::string::npos);

    // A bad value is refused with the accepted ones.
    const std::string bad = run_to_end({"model", "info", k_model, "--gpu-layers", "most"}, dir + "/bad.log", {}, &rc);
    CHECK(rc == 2);
    CHECK(slurp(dir + "/bad.log").find("'all' or 'auto'") != std::string::npos);
}
