// `hearth model info [FILE] [--model PATH] [--json] [--ctx N] [--files N] [--gpu-layers N|all|auto]`:
// prints what a GGUF model is and what it costs to run. The numbers come from
// inference::describe_model, the GPU plan from model_offload_report.h; this file only finds the
// model and prints. Exit codes: 0 ok, 1 unreadable or malformed file, 2 no model given and none
// found, or a bad option.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "daemon/models/byte_units.h"
#include "daemon/cli/cli_commands.h"
#include "daemon/cli/model_offload_report.h"
#include "daemon/engine/model_path.h"
#include "daemon/settings/config.h"
#include "inference/gguf/gguf_file.h"
#include "inference/cache/kv_cache.h"
#include "inference/load/loaded_model.h"
#include "inference/load/model_info.h"

namespace hearth::daemon {
namespace {

namespace fs = std::filesystem;
using inference::model_info;

struct info_options {
    std::string file;
    std::string model;
    bool json = false;
    uint64_t n_ctx = 4096;
    uint64_t n_files = 4;
    std::string cache_type = inference::k_default_cache_type;
    std::optional<std::string> gpu_layers;   // plan the offload when given
    std::string gpu_memory;                  // `auto` plans within this much device memory ("": the device's)
};

std::string human_count(uint64_t n) {
    char buf[48];
    if (n >= 1000000000) std::snprintf(buf, sizeof buf, "%.2f B", static_cast<double>(n) / 1e9);
    else if (n >= 1000000) std::snprintf(buf, sizeof buf, "%.2f M", static_cast<double>(n) / 1e6);
    else if (n >= 1000) std::snprintf(buf, sizeof buf, "%.1f K", static_cast<double>(n) / 1e3);
    else std::snprintf(buf, sizeof buf, "%" PRIu64, n);
    return buf;
}

std::string or_dash(const std::string & s) { return s.empty() ? "-" : s; }
std::string num_or_unknown(uint64_t n) { return n ? std::to_string(n) : "unknown"; }

void print_text(const model_info & m) {
    auto row = [](const char * label, const std::string & value) { std::printf("%-22s %s\n", label, value.c_str()); };
    row("file", m.path + " (GGUF v" + std::to_string(m.gguf_version) + ", " + human_bytes(m.file_size, 2) + ")");
    row("architecture", m.architecture + (m.name.empty() ? "" : "  (" + m.name + ")"));
    row("parameters", human_count(m.n_params) + " (" + std::to_string(m.n_params) + " in " + std::to_string(m.n_tensors) + " tensors)");
    row("context length", num_or_unknown(m.n_ctx_train));
    row("layers", num_or_unknown(m.n_layer));
    std::string heads = num_or_unknown(m.n_head) + " query, " + num_or_unknown(m.n_head_kv) + " KV";
    if (m.n_head && m.n_head_kv && m.n_head != m.n_head_kv && m.n_head % m.n_head_kv == 0)
        heads += " (" + std::to_string(m.n_head / m.n_head_kv) + " query heads per KV head)";
    row("heads", heads);
    row("head size", m.head_dim_k == m.head_dim_v ? num_or_unknown(m.head_dim_k)
                                                  : num_or_unknown(m.head_dim_k) + " (K), " + num_or_unknown(m.head_dim_v) + " (V)");
    row("embedding / FFN", num_or_unknown(m.n_embd) + " / " + num_or_unknown(m.n_ff));
    row("vocabulary", num_or_unknown(m.n_vocab) + " tokens, tokenizer " + or_dash(m.tokenizer_model) + ", pre " + or_dash(m.tokenizer_pre));
    if (m.fim.complete())
        row("fill-in-the-middle", "yes (" + m.fim.source + "): prefix " + m.fim.prefix->text + " = " + std::to_string(m.fim.prefix->id) +
                                      ", suffix " + m.fim.suffix->text + " = " + std::to_string(m.fim.suffix->id) + ", middle " +
                                      m.fim.middle->text + " = " + std::to_string(m.fim.middle->id));
    else
        row("fill-in-the-middle", "no FIM tokens found");
    row("fim format", m.fim_format + " (" + m.fim_format_reason + ")");
    row("chat template", m.has_chat_template ? "yes (" + std::to_string(m.chat_template_bytes) + " bytes)" : "no");
    row("chat format", m.chat_format.empty() ? "none: " + m.chat_format_reason : m.chat_format + " (" + m.chat_format_reason + ")");

    std::printf("\ntensor types:\n  %-8s %8s %16s %14s\n", "type", "tensors", "elements", "bytes");
    for (const auto & t : m.tensor_types)
        std::printf("  %-8s %8" PRIu64 " %16" PRIu64 " %14s\n", t.type.c_str(), t.n_tensors, t.n_elements, human_bytes(t.size_bytes, 2).c_str());
    row("weights mapped", human_bytes(m.weights_bytes, 2) + " (" + std::to_string(m.weights_bytes) + " bytes)");

    std::printf("\nKV cache:\n  %-10s %13s %24s\n", "type (K/V)", "per token", ("at context " + num_or_unknown(m.n_ctx_train)).c_str());
    bool any_smoothed = false;
    for (const auto & c : m.kv_costs) {
        const std::string type = c.type + (c.k_smoothed ? "*" : "");
        any_smoothed = any_smoothed || c.k_smoothed;
        if (c.bytes_per_token)
            std::printf("  %-10s %13s %24s\n", type.c_str(), human_bytes(*c.bytes_per_token, 2).c_str(),
                        c.bytes_model_ctx ? human_bytes(*c.bytes_model_ctx, 2).c_str() : "-");
        else
            std::printf("  %-10s %13s   (%s)\n", type.c_str(), "n/a", c.why_not.c_str());
    }
    if (any_smoothed)
        std::printf("  * K stored smoothed: its bias's outlier pairs divided by powers of two, the queries\n"
                    "    multiplied back (docs/design.md has what each pair keeps of llama.cpp's tokens)\n");

    const auto & mem = m.memory;
    std::printf("\nestimated peak RAM for %" PRIu64 " tokens of context, %" PRIu64 " cached files, %s KV cache, batch %" PRIu64 ":\n",
                mem.n_ctx, mem.n_files, mem.kv_type.c_str(), mem.n_batch);
    std::printf("  %-18s %14s\n", "weights (mapped)", human_bytes(mem.weights_bytes, 2).c_str());
    std::printf("  %-18s %14s\n", "KV cache", human_bytes(mem.kv_bytes, 2).c_str());
    std::printf("  %-18s %14s  (activations %s, quantized inputs %s, attention scores %s, logits %s)\n", "compute buffers",
                human_bytes(mem.compute.total(), 2).c_str(), human_bytes(mem.compute.activations, 2).c_str(),
                human_bytes(mem.compute.quantized_input, 2).c_str(), human_bytes(mem.compute.attention_scores, 2).c_str(),
                human_bytes(mem.compute.logits, 2).c_str());
    std::printf("  %-18s %14s\n", "total", human_bytes(mem.total_bytes(), 2).c_str());
    for (const auto & n : m.notes) std::printf("note: %s\n", n.c_str());
}

boost::json::value fim_json(const std::optional<inference::fim_token> & t) {
    if (!t) return nullptr;
    return boost::json::object{{"id", t->id}, {"text", t->text}};
}

boost::json::object to_json(const model_info & m) {
    namespace json = boost::json;
    json::array types;
    for (const auto & t : m.tensor_types)
        types.push_back(json::object{{"type", t.type}, {"tensors", t.n_tensors}, {"elements", t.n_elements}, {"bytes", t.size_bytes}});
    json::array kv;
    for (const auto & c : m.kv_costs) {
        json::object o{{"type", c.type}, {"k_smoothed", c.k_smoothed}};
        o["bytes_per_token"] = c.bytes_per_token ? json::value(*c.bytes_per_token) : json::value(nullptr);
        o["bytes_model_ctx"] = c.bytes_model_ctx ? json::value(*c.bytes_model_ctx) : json::value(nullptr);
        if (!c.bytes_per_token) o["why_not"] = c.why_not;
        kv.push_back(std::move(o));
    }
    const auto & mem = m.memory;
    json::object fim{{"present", m.fim.complete()}};
    if (m.fim.complete()) {
        fim["source"] = m.fim.source;
        fim["prefix"] = fim_json(m.fim.prefix);
        fim["suffix"] = fim_json(m.fim.suffix);
        fim["middle"] = fim_json(m.fim.middle);
    }
    json::array notes;
    for (const auto & n : m.notes) notes.push_back(json::string(n));
    return json::object{
        {"file", m.path},
        {"gguf_version", m.gguf_version},
        {"file_bytes", m.file_size},
        {"architecture", m.architecture},
        {"name", m.name},
        {"parameters", m.n_params},
        {"tensors", m.n_tensors},
        {"context_length", m.n_ctx_train},
        {"layers", m.n_layer},
        {"embedding_length", m.n_embd},
        {"feed_forward_length", m.n_ff},
        {"heads", m.n_head},
        {"kv_heads", m.n_head_kv},
        {"head_size_k", m.head_dim_k},
        {"head_size_v", m.head_dim_v},
        {"vocabulary", m.n_vocab},
        {"tokenizer", json::object{{"model", m.tokenizer_model}, {"pre", m.tokenizer_pre}}},
        {"fim", std::move(fim)},
        {"fim_format", json::object{{"name", m.fim_format}, {"reason", m.fim_format_reason}}},
        {"chat_template", json::object{{"present", m.has_chat_template}, {"bytes", m.chat_template_bytes}}},
        {"chat_format", json::object{{"name", m.chat_format.empty() ? json::value(nullptr) : json::value(m.chat_format)},
                                     {"reason", m.chat_format_reason}}},
        {"tensor_types", std::move(types)},
        {"weights_bytes", m.weights_bytes},
        {"kv_cache", std::move(kv)},
        {"peak_ram", json::object{{"context", mem.n_ctx},
                                  {"files", mem.n_files},
                                  {"batch", mem.n_batch},
                                  {"kv_type", mem.kv_type},
                                  {"weights_bytes", mem.weights_bytes},
                                  {"kv_bytes", mem.kv_bytes},
                                  {"compute_bytes", mem.compute.total()},
                                  {"compute", json::object{{"activations", mem.compute.activations},
                                                           {"quantized_input", mem.compute.quantized_input},
                                                           {"attention_scores", mem.compute.attention_scores},
                                                           {"logits", mem.compute.logits}}},
                                  {"total_bytes", mem.total_bytes()}}},
        {"notes", std::move(notes)},
    };
}

int run_info(const info_options & o) {
    // The one lookup every command uses (FILE or --model, $HEARTH_MODEL, the config, the default model).
    auto found = resolve_model_path(o.file.empty() ? o.model : o.file);
    if (!found) {
        std::fprintf(stderr, "hearth model info: %s\n", found.message().c_str());
        return 2;
    }
    const std::string path = *found;
    auto file = inference::gguf::gguf_file::open(path);
    if (!file) {
        std::fprintf(stderr, "hearth model info: %s\n", file.message().c_str());
        return 1;
    }
    inference::memory_options mo;
    mo.n_ctx = o.n_ctx;
    mo.n_files = o.n_files;
    auto kv_type = inference::parse_cache_types(o.cache_type);
    if (!kv_type) {
        std::fprintf(stderr, "hearth model info: %s\n", kv_type.message().c_str());
        return 2;
    }
    mo.kv_type = *kv_type;
    auto info = inference::describe_model(*file, mo);
    if (!info) {
        std::fprintf(stderr, "hearth model info: %s: %s\n", path.c_str(), info.message().c_str());
        return 1;
    }
    info->path = path;
    std::optional<offload_report> offload;
    if (o.gpu_layers) {
        auto want = inference::parse_gpu_layers(*o.gpu_layers);
        if (!want) {
            std::fprintf(stderr, "hearth model info: %s\n", want.message().c_str());
            return 2;
        }
        if (!o.gpu_memory.empty()) {
            auto cap = parse_bytes(o.gpu_memory);
            if (!cap || *cap == 0) {
                std::fprintf(stderr, "hearth model info: --gpu-memory '%s': expected a size such as 4GiB\n", o.gpu_memory.c_str());
                return 2;
            }
            want->device_memory_cap = *cap;
        }
        auto m = inference::model::load(*file);
        if (!m) {
            std::fprintf(stderr, "hearth model info: %s: %s\n", path.c_str(), m.message().c_str());
            return 1;
        }
        // The room the daemon's engine keeps: this context and these slots, its batch, this cache type.
        const inference::offload_room room{static_cast<int32_t>(info->memory.n_ctx), static_cast<int32_t>(o.n_files),
                                           inference::load_options{}.n_batch, *kv_type};
        offload = make_offload_report(*m, *want, room);
    }
    if (o.json) {
        auto j = to_json(*info);
        if (offload) j["gpu_offload"] = offload_report_json(*offload);
        std::printf("%s\n", boost::json::serialize(j).c_str());
    } else {
        print_text(*info);
        if (offload) print_offload_report(*offload);
    }
    return 0;
}

}  // namespace

void add_model_commands(CLI::App & app, cli_state & state) {
    auto * model = app.add_subcommand("model", "Inspect model files");
    model->require_subcommand(1);
    auto * info = model->add_subcommand("info", "Print what a GGUF model contains and what it costs to run");
    auto opts = std::make_shared<info_options>();
    info->add_option("file", opts->file, "GGUF file (default: --model, $HEARTH_MODEL, or the model scripts/fetch-model fetched)");
    info->add_option("--model", opts->model, "GGUF file (same as FILE)");
    info->add_flag("--json", opts->json, "Print JSON instead of text");
    info->add_option("--ctx", opts->n_ctx, "Context length for the RAM estimate (capped at the model's)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 24));
    info->add_option("--files", opts->n_files, "Cached file slots (one KV cache each) for the RAM estimate")
        ->check(CLI::Range(uint64_t{0}, uint64_t{4096}));
    info->add_option("--cache-type", opts->cache_type, "KV cache type for the RAM estimate: f32, f16, q8_0, q4_0, or K/V as f16/q8_0 (default: the daemon's)");
    info->add_option("--gpu-layers", opts->gpu_layers, "Plan the last layers on a GPU: N, all or auto (each backend's device, memory and layers)");
    info->add_option("--gpu-memory", opts->gpu_memory, "With --gpu-layers auto: plan as if the device had this much memory (e.g. 512MiB)");
    info->callback([&state, opts] { state.exit_code = run_info(*opts); });
}

}  // namespace hearth::daemon
