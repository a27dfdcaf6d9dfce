// config: every setting of `hearth daemon`, from defaults, then the TOML config file
// (~/.config/hearth/config.toml or --config FILE), then the command line (which wins).
// File keys are the command-line option names (`kv-budget = "2GiB"`); the tuning knobs
// that have no option live in [limits], [completion], [chat] and [next_edit] tables. An unknown key or
// a wrong-typed value is an error naming the key and the file, never silently ignored.
// Thread-safety: a plain value, read-only once the daemon starts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "inference/cache/kv_cache.h"
#include "inference/device/layer_plan.h"
#include "inference/session/sequence.h"

namespace hearth::daemon {

struct daemon_limits {
    size_t max_connections = 32;               // authenticated ones (Unix, stdio, TCP past hearth/auth)
    size_t max_message_bytes = 4u << 20;       // one framed JSON-RPC body
    size_t max_documents = 256;                // open documents per connection
    size_t max_document_bytes = 8u << 20;
    size_t max_requests_in_flight = 32;        // per connection
    size_t max_queued = 64;                    // model jobs waiting, all connections
    uint32_t partial_message_timeout_ms = 10000;  // a started message must complete within
    size_t max_write_buffer_bytes = 64u << 20; // unread output per connection before closing it
    // TCP connections that have not sent hearth/auth yet: any local user can open them, so
    // they have their own small pool (the oldest is dropped for a new one) and deadline.
    size_t max_unauthenticated = 8;
    uint32_t auth_timeout_ms = 2000;
};

struct completion_settings {
    uint32_t debounce_ms = 50;       // automatic triggers wait this long for the next keystroke
    int32_t prefix_lines = 64;       // whole lines before the cursor line in the FIM window
    int32_t suffix_lines = 16;       // whole lines after the cursor line
    bool window_grid = false;        // window edges on a line grid (a stable head without chunk reuse) or exact
    int32_t max_tokens = 64;         // per candidate
    // Time budgets, each apart (docs/daemon.md): evaluating the prompt (a window that would
    // take longer at the measured speed is shortened), generating a candidate from its first
    // token (a multi-line answer, a block or a body, has more to write than a line, and gets
    // its own), and the hard cap up to which a line the generation budget interrupted is finished.
    uint32_t prompt_budget_ms = 6000;
    uint32_t time_budget_ms = 1000;
    uint32_t multi_line_time_budget_ms = 2000;
    uint32_t time_cap_ms = 4000;
    int32_t invoked_candidates = 3;  // candidates for an explicit (Invoked) request
    bool retry_repeated_line = true; // a line that only repeats the one after the cursor is asked for again without it
    int32_t chunk_reuse_min = inference::k_default_chunk_min;   // reuse moved KV chunks of at least this many tokens; 0: exact prefix reuse only
    int32_t slots_per_document = 2;     // KV slots per document (places worked at in a long file)
    int32_t extra_context_chunks = 2;   // pieces of other files recently worked in, before the window; 0: none
    int32_t extra_context_lines = 32;   // lines per piece
    bool typed_ahead = true;         // typing the start of a shown suggestion is answered from it
    bool prefetch = true;            // compute the completion after a suggestion's accept while it is shown
    // Prefill the window where the cursor rests (hearth/cursorRest) and at the top of a file
    // just opened, in the background, so the first suggestion there finds it computed.
    bool warm_up = true;
};

struct chat_settings {
    int32_t max_tokens = 512;
    uint32_t time_budget_ms = 120000;
    int32_t context_lines = 40;      // lines around the selection sent with it
    bool show_reasoning = false;     // a <think> block: folded into <details> instead of hidden
    // The system message of every chat ("": none).
    std::string system_prompt = "You are hearth, a coding assistant inside the user's editor. Answer precisely and briefly; "
                                "put code in fenced blocks.";
};

// hearth/nextEdit (daemon/pipeline/next_edit_pipeline.h).
struct next_edit_settings {
    bool enabled = true;             // off: every request answers "no edit"
    int32_t window_lines = 10;       // lines above and below the cursor's line that the model rewrites
    int32_t context_lines = 40;      // lines above and below the window shown as context (formats that show it)
    int32_t max_edits = 6;           // recent edits shown, the newest
    uint32_t time_budget_ms = 2000;  // the rewrite's generation
    bool warm_up = true;             // prefill the prompt when the cursor rests (hearth/cursorRest)
};

// Where completions and chats are computed (docs/remote.md): the local model, or an
// OpenAI-compatible engine with the local model as fallback.
struct remote_settings {
    std::string engine = "local";     // "local" or "remote"
    std::string url;                  // remote-url: http(s)://host:port
    std::string api = "openai";       // remote-api: openai or llama-server
    std::string model;                // remote-model: the "model" each request names ("": none)
    std::string key_file;             // remote-key-file: the API key, read from this file ("": none)
    uint32_t budget_ms = 1500;        // remote-budget-ms: the first piece of an answer within this, else local
};

struct daemon_config {
    std::string model_path;
    int32_t threads = 0;                  // 0: the engine picks
    std::string cache_type = inference::k_default_cache_type;   // K and V; or a K/V pair, "f16/q8_0"
    std::string cache_type_k, cache_type_v;   // "": cache_type's half
    uint64_t kv_budget_bytes = 0;         // 0: the engine picks
    std::string chat_template;            // "": the model's own tokenizer.chat_template
    std::string gpu_layers = inference::k_default_gpu_layers;   // the last layers on a GPU: N, "all" or "auto"
    std::string speculate = "lookup";     // speculative decoding: off, lookup, draft, both
    std::string draft_model;              // the draft's GGUF (speculate = draft or both)
    std::string slot_dir;                 // "": default_slot_dir(); "none": KV slots are not persisted
    uint64_t slot_disk_budget_bytes = 1ull << 30;   // slot files kept per model
    std::string runtime_dir;              // "": default_runtime_dir(); holds socket, token, port, locks
    std::string socket_path;              // "": <runtime dir>/hearth.sock; "none": no Unix socket
    int32_t tcp_port = -1;                // -1: no TCP; 0: any free port (logged, and written to the runtime dir)
    bool listen_any = false;              // TCP on all interfaces instead of loopback
    // The HTTP API (docs/http.md): always on loopback only, whatever listen-any says.
    int32_t http_port = -1;               // -1: off; 0: any free port (written to <runtime dir>/hearth.http-port)
    std::string http_token_file;          // "": the TCP transport's token (<runtime dir>/hearth.token)
    bool http_no_token = false;           // serve HTTP without a bearer token (for clients that cannot send one)
    bool stdio = false;                   // serve one client on stdin/stdout
    std::string log_level = "info";
    std::string log_file;                 // "": default_log_file(); "none": no file
    int io_threads = 2;
    remote_settings remote;
    daemon_limits limits;
    completion_settings completion;
    chat_settings chat;
    next_edit_settings next_edit;
};

// ${XDG_CONFIG_HOME:-~/.config}/hearth/config.toml
std::string default_config_file();
// ${XDG_STATE_HOME:-~/.local/state}/hearth/hearth.log
std::string default_log_file();

// Applies the keys of a TOML file onto `cfg`. A missing file is an error only when
// `required` (an explicit --config); the default file is optional.
status load_config_file(const std::string & path, bool required, daemon_config & cfg);
// What every command does with its --config flag: that file, which must exist, or else the
// default file, if there is one.
status load_command_config(const std::optional<std::string> & config_flag, daemon_config & cfg);
status load_config_text(std::string_view toml_text, std::string_view source_name, daemon_config & cfg);

// "4096", "512KiB", "2MiB", "1.5GiB", "3G" -> bytes. Error names the text.
result<uint64_t> parse_bytes(std::string_view text);

status validate(const daemon_config & cfg);

// The KV cache's K and V types from cache-type, cache-type-k and cache-type-v; f32 is for tests,
// not the daemon. The error names the setting.
result<inference::kv_types> kv_cache_types(const daemon_config & cfg);

}  // namespace hearth::daemon
