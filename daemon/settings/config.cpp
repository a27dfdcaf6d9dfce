#include "daemon/settings/config.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <toml++/toml.h>

#include "inference/decode/speculate.h"
#include "inference/device/layer_device.h"

namespace hearth::daemon {

namespace {

std::string home_dir() {
    const char * h = std::getenv("HOME");
    return h && h[0] ? h : "/tmp";
}

std::string xdg_dir(const char * var, const char * fallback_under_home) {
    const char * v = std::getenv(var);
    if (v && v[0] == '/') return v;
    return home_dir() + "/" + fallback_under_home;
}

// One setter per key; it reads the node or returns what was wrong with it.
using setter = std::function<status(const toml::node &, daemon_config &)>;

std::string where(const toml::node & n, std::string_view source, std::string_view key) {
    std::ostringstream s;
    s << source << ":" << n.source().begin.line << ": " << key;
    return s.str();
}

template <class Get>
setter integer(Get get, int64_t lo, int64_t hi) {
    return [get, lo, hi](const toml::node & n, daemon_config & c) -> status {
        auto v = n.value<int64_t>();
        if (!n.is_integer() || !v) return fail("expected an integer");
        if (*v < lo || *v > hi) return fail("expected ", lo, "..", hi, ", got ", *v);
        get(c) = static_cast<std::remove_reference_t<decltype(get(c))>>(*v);
        return {};
    };
}

template <class Get>
setter string(Get get) {
    return [get](const toml::node & n, daemon_config & c) -> status {
        if (!n.is_string()) return fail("expected a string");
        get(c) = *n.value<std::string>();
        return {};
    };
}

template <class Get>
setter boolean(Get get) {
    return [get](const toml::node & n, daemon_config & c) -> status {
        if (!n.is_boolean()) return fail("expected true or false");
        get(c) = *n.value<bool>();
        return {};
    };
}

template <class Get>
setter bytes(Get get) {
    return [get](const toml::node & n, daemon_config & c) -> status {
        if (n.is_integer()) {
            const int64_t v = *n.value<int64_t>();
            if (v < 0) return fail("expected a non-negative size");
            get(c) = static_cast<std::remove_reference_t<decltype(get(c))>>(v);
            return {};
        }
        if (!n.is_string()) return fail("expected a size (bytes, or a string like \"2GiB\")");
        auto b = parse_bytes(*n.value<std::string>());
        if (!b) return b.error();
        get(c) = static_cast<std::remove_reference_t<decltype(get(c))>>(*b);
        return {};
    };
}

#define F(expr) [](daemon_config & c) -> auto & { return c.expr; }

const std::map<std::string, setter, std::less<>> & top_keys() {
    static const std::map<std::string, setter, std::less<>> keys = {
        {"model", string(F(model_path))},
        {"threads", integer(F(threads), 0, 1024)},
        {"cache-type", string(F(cache_type))},
        {"cache-type-k", string(F(cache_type_k))},
        {"cache-type-v", string(F(cache_type_v))},
        {"chat-template", string(F(chat_template))},
        {"gpu-layers", string(F(gpu_layers))},
        {"speculate", string(F(speculate))},
        {"draft-model", string(F(draft_model))},
        {"kv-budget", bytes(F(kv_budget_bytes))},
        {"slot-dir", string(F(slot_dir))},
        {"slot-disk-budget", bytes(F(slot_disk_budget_bytes))},
        {"runtime-dir", string(F(runtime_dir))},
        {"socket", string(F(socket_path))},
        {"tcp", integer(F(tcp_port), -1, 65535)},
        {"listen-any", boolean(F(listen_any))},
        {"http-port", integer(F(http_port), -1, 65535)},
        {"http-token-file", string(F(http_token_file))},
        {"http-no-token", boolean(F(http_no_token))},
        {"log-level", string(F(log_level))},
        {"log-file", string(F(log_file))},
        {"io-threads", integer(F(io_threads), 1, 64)},
        {"engine", string(F(remote.engine))},
        {"remote-url", string(F(remote.url))},
        {"remote-api", string(F(remote.api))},
        {"remote-model", string(F(remote.model))},
        {"remote-key-file", string(F(remote.key_file))},
        {"remote-budget-ms", integer(F(remote.budget_ms), 1, 600000)},
    };
    return keys;
}

const std::map<std::string, setter, std::less<>> & limits_keys() {
    static const std::map<std::string, setter, std::less<>> keys = {
        {"max-connections", integer(F(limits.max_connections), 1, 4096)},
        {"max-message-bytes", bytes(F(limits.max_message_bytes))},
        {"max-documents", integer(F(limits.max_documents), 1, 1 << 20)},
        {"max-document-bytes", bytes(F(limits.max_document_bytes))},
        {"max-requests-in-flight", integer(F(limits.max_requests_in_flight), 1, 1 << 16)},
        {"max-queued", integer(F(limits.max_queued), 1, 1 << 16)},
        {"partial-message-timeout-ms", integer(F(limits.partial_message_timeout_ms), 1, 3600000)},
        {"max-write-buffer-bytes", bytes(F(limits.max_write_buffer_bytes))},
        {"max-unauthenticated", integer(F(limits.max_unauthenticated), 1, 4096)},
        {"auth-timeout-ms", integer(F(limits.auth_timeout_ms), 1, 600000)},
    };
    return keys;
}

const std::map<std::string, setter, std::less<>> & completion_keys() {
    static const std::map<std::string, setter, std::less<>> keys = {
        {"debounce-ms", integer(F(completion.debounce_ms), 0, 10000)},
        {"prefix-lines", integer(F(completion.prefix_lines), 0, 100000)},
        {"suffix-lines", integer(F(completion.suffix_lines), 0, 100000)},
        {"window-grid", boolean(F(completion.window_grid))},
        {"max-tokens", integer(F(completion.max_tokens), 1, 4096)},
        {"prompt-budget-ms", integer(F(completion.prompt_budget_ms), 0, 600000)},
        {"time-budget-ms", integer(F(completion.time_budget_ms), 1, 600000)},
        {"multi-line-time-budget-ms", integer(F(completion.multi_line_time_budget_ms), 1, 600000)},
        {"time-cap-ms", integer(F(completion.time_cap_ms), 0, 600000)},
        {"invoked-candidates", integer(F(completion.invoked_candidates), 1, 8)},
        {"retry-repeated-line", boolean(F(completion.retry_repeated_line))},
        {"chunk-reuse-min", integer(F(completion.chunk_reuse_min), 0, 1 << 20)},
        {"slots-per-document", integer(F(completion.slots_per_document), 1, 16)},
        {"extra-context-chunks", integer(F(completion.extra_context_chunks), 0, 64)},
        {"extra-context-lines", integer(F(completion.extra_context_lines), 1, 1024)},
        {"typed-ahead", boolean(F(completion.typed_ahead))},
        {"warm-up", boolean(F(completion.warm_up))},
        {"prefetch", boolean(F(completion.prefetch))},
    };
    return keys;
}

const std::map<std::string, setter, std::less<>> & chat_keys() {
    static const std::map<std::string, setter, std::less<>> keys = {
        {"max-tokens", integer(F(chat.max_tokens), 1, 65536)},
        {"time-budget-ms", integer(F(chat.time_budget_ms), 1, 3600000)},
        {"context-lines", integer(F(chat.context_lines), 0, 100000)},
        {"show-reasoning", boolean(F(chat.show_reasoning))},
        {"system-prompt", string(F(chat.system_prompt))},
    };
    return keys;
}
const std::map<std::string, setter, std::less<>> & next_edit_keys() {
    static const std::map<std::string, setter, std::less<>> keys = {
        {"enabled", boolean(F(next_edit.enabled))},
        {"window-lines", integer(F(next_edit.window_lines), 1, 200)},
        {"context-lines", integer(F(next_edit.context_lines), 0, 10000)},
        {"max-edits", integer(F(next_edit.max_edits), 0, 64)},
        {"time-budget-ms", integer(F(next_edit.time_budget_ms), 1, 600000)},
        {"warm-up", boolean(F(next_edit.warm_up))},
    };
    return keys;
}
#undef F

status apply_table(const toml::table & t, const std::map<std::string, setter, std::less<>> & keys,
                   std::string_view prefix, std::string_view source, daemon_config & cfg) {
    for (auto && [k, node] : t) {
        const std::string key = std::string(prefix) + std::string(k.str());
        auto it = keys.find(k.str());
        if (it == keys.end()) return fail(where(node, source, key), ": unknown key");
        if (auto s = it->second(node, cfg); !s) return fail(where(node, source, key), ": ", s.message());
    }
    return {};
}

}  // namespace

std::string default_config_file() { return xdg_dir("XDG_CONFIG_HOME", ".config") + "/hearth/config.toml"; }
std::string default_log_file() { return xdg_dir("XDG_STATE_HOME", ".local/state") + "/hearth/hearth.log"; }

status load_config_text(std::string_view text, std::string_view source, daemon_config & cfg) {
    toml::table root;
    try {
        root = toml::parse(text, source);
    } catch (const toml::parse_error & e) {
        return fail(source, ":", e.source().begin.line, ":", e.source().begin.column, ": ", e.description());
    }
    static const std::map<std::string, const std::map<std::string, setter, std::less<>> *, std::less<>> tables = {
        {"limits", &limits_keys()}, {"completion", &completion_keys()}, {"chat", &chat_keys()},
        {"next_edit", &next_edit_keys()}};
    for (auto && [k, node] : root) {
        if (auto tab = tables.find(k.str()); tab != tables.end()) {
            if (!node.is_table()) return fail(where(node, source, k.str()), ": expected a table [", k.str(), "]");
            if (auto s = apply_table(*node.as_table(), *tab->second, std::string(k.str()) + ".", source, cfg); !s)
                return s;
            continue;
        }
        auto it = top_keys().find(k.str());
        if (it == top_keys().end()) return fail(where(node, source, k.str()), ": unknown key");
        if (auto s = it->second(node, cfg); !s) return fail(where(node, source, k.str()), ": ", s.message());
    }
    return {};
}

status load_command_config(const std::optional<std::string> & config_flag, daemon_config & cfg) {
    return load_config_file(config_flag.value_or(default_config_file()), config_flag.has_value(), cfg);
}

status load_config_file(const std::string & path, bool required, daemon_config & cfg) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (!required) return {};
        return fail("config file ", path, ": cannot be read");
    }
    std::ostringstream s;
    s << in.rdbuf();
    return load_config_text(s.str(), path, cfg);
}

result<uint64_t> parse_bytes(std::string_view text) {
    std::string_view t = text;
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    double number = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), number);
    if (ec != std::errc{} || number < 0 || !std::isfinite(number))
        return fail("size '", text, "': expected a number of bytes, optionally with KiB/MiB/GiB (or K/M/G)");
    std::string unit(p, t.data() + t.size());
    while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
    for (char & c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    double mult = 1;
    if (unit.empty() || unit == "b") mult = 1;
    else if (unit == "k" || unit == "kib" || unit == "kb") mult = 1024.0;
    else if (unit == "m" || unit == "mib" || unit == "mb") mult = 1024.0 * 1024;
    else if (unit == "g" || unit == "gib" || unit == "gb") mult = 1024.0 * 1024 * 1024;
    else return fail("size '", text, "': unknown unit '", unit, "'; expected KiB, MiB or GiB");
    const double bytes = number * mult;
    if (bytes > 9.0e18) return fail("size '", text, "': too large");
    return static_cast<uint64_t>(bytes);
}

result<inference::kv_types> kv_cache_types(const daemon_config & c) {
    auto t = inference::parse_cache_types(c.cache_type, c.cache_type_k, c.cache_type_v);
    if (!t || t->k == kernels::tensor_type::f32 || t->v == kernels::tensor_type::f32)
        return fail("cache-type '", c.cache_type, "'", c.cache_type_k.empty() ? "" : ", cache-type-k '" + c.cache_type_k + "'",
                    c.cache_type_v.empty() ? "" : ", cache-type-v '" + c.cache_type_v + "'",
                    ": expected f16, q8_0 or q4_0 for each, or a K/V pair such as f16/q8_0");
    return *t;
}

status validate(const daemon_config & c) {
    if (auto t = kv_cache_types(c); !t) return t.error();
    if (auto g = inference::parse_gpu_layers(c.gpu_layers); !g) return fail("gpu-layers: ", g.message());
    if (auto m = inference::parse_speculate_mode(c.speculate); !m) return fail("speculate: ", m.message());
    if ((c.speculate == "draft" || c.speculate == "both") && c.draft_model.empty())
        return fail("speculate = ", c.speculate, " needs draft-model");
    if (c.remote.engine != "local" && c.remote.engine != "remote")
        return fail("engine '", c.remote.engine, "': expected local or remote");
    if (c.remote.api != "openai" && c.remote.api != "llama-server")
        return fail("remote-api '", c.remote.api, "': expected openai or llama-server");
    if (c.remote.engine == "remote" && c.remote.url.rfind("http://", 0) != 0 && c.remote.url.rfind("https://", 0) != 0)
        return fail("engine = remote needs remote-url = \"http://host:port\" (or https://); got '", c.remote.url, "'");
    static const char * levels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
    bool level_ok = false;
    for (const char * l : levels) level_ok |= c.log_level == l;
    if (!level_ok) return fail("log-level '", c.log_level, "': expected trace, debug, info, warn, error, critical or off");
    if (c.tcp_port < -1 || c.tcp_port > 65535) return fail("tcp port ", c.tcp_port, ": expected 0..65535");
    if (c.http_port < -1 || c.http_port > 65535) return fail("http port ", c.http_port, ": expected 0..65535");
    if (c.http_no_token && !c.http_token_file.empty())
        return fail("http-no-token and http-token-file contradict each other: give one");
    if (c.socket_path == "none" && c.tcp_port < 0 && !c.stdio && c.http_port < 0)
        return fail("no transport: give --socket PATH, --tcp PORT, --http PORT or --stdio");
    if (c.limits.max_message_bytes < 1024) return fail("limits.max-message-bytes: expected at least 1024");
    return {};
}

}  // namespace hearth::daemon
