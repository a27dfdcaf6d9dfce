// model_service: the seam between the daemon's services and the inference engine.
// The completion and chat services build requests from the document store and call
// this interface; the engine behind it (daemon/engine/model_service_engine.cpp) owns the
// model, the KV caches and the kernel thread pool. Tests use their own double.
//
// Invariants:
//  - complete(), chat(), next_edit() and release_document() are called ONLY from the scheduler's one
//    compute worker thread, never concurrently with each other.
//  - status() may be called from any thread at any time, also while complete() or chat()
//    runs on the worker: it returns a snapshot without waiting for the generation (the
//    hearth/status request must answer in milliseconds during a long chat).
//  - `stop` is checked once per generated token (and between prompt batches); when it is
//    requested the call returns promptly with what was generated so far and
//    stop_reason::cancelled. A cancelled call is not an error.
//  - on_piece receives whole UTF-8 characters (the engine holds back an incomplete
//    multi-byte sequence until it completes), in order, on the worker thread. It may be
//    empty (no callback). It must not block for long: it posts to the I/O threads.
//  - An error (bad request, model failure) comes back as result's error with a message;
//    nothing throws out of these functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace hearth::daemon {

// Called with each decoded piece of text, in order (see the invariants above).
using piece_callback = std::function<void(std::string_view piece)>;

enum class stop_reason {
    end_of_generation,  // the model emitted an end-of-generation token (EOS / EOT / FIM end)
    max_tokens,         // n_predict tokens were generated
    time_budget,        // the generation's time budget ran out (at the end of a line, where the cap allowed)
    time_cap,           // the hard cap cut a line the budget had interrupted
    stop_rule,          // a line/indentation rule of the completion mode ended it
    cancelled,          // `stop` was requested
};
inline constexpr size_t k_n_stop_reasons = 6;
std::string_view stop_reason_name(stop_reason r);

// single_line: stop at the first newline (cursor mid-line, or a plain statement).
// multi_line: continue across lines until the block ends (a line dedented below the
// cursor's indentation, an empty line after a complete block, or the budget).
enum class completion_mode { single_line, multi_line };

// Text from another file placed before the FIM window (recently edited or opened files),
// so that it stays in the cached part of the prompt while the cursor moves.
struct context_chunk {
    std::string uri;
    std::string text;
};

struct fim_request {
    std::string uri;                         // the document; keys the per-file KV slot
    std::string language_id;                 // LSP languageId ("cpp", "python", ...)
    std::string prefix;                      // UTF-8 text before the cursor (whole lines + the cursor line's head)
    std::string suffix;                      // UTF-8 text after the cursor (the cursor line's tail + whole lines)
    std::vector<context_chunk> extra_context;
    completion_mode mode = completion_mode::single_line;
    int32_t n_predict = 64;                  // max generated tokens per candidate
    // Time budgets, each apart (see inference/decode/generate.h):
    //  - prompt_budget: evaluating the prompt. Where the tokens the KV cache lacks would take
    //    longer at the measured prompt speed, the window loses lines at its far ends first.
    //  - time_budget: generating each candidate, from its first token. A line it interrupts
    //    is finished, up to time_cap from the candidate's start.
    std::chrono::milliseconds prompt_budget{3000};
    std::chrono::milliseconds time_budget{1000};
    std::chrono::milliseconds time_cap{4000};
    // >= 0: other files' chunks whose rows the slot lacks may add at most this many tokens to
    // the window's (the oldest chunks go first); for clients that fill the slot with warm-ups
    // (llama.vim, llama.vscode over HTTP). -1: only the prompt budget limits them.
    int32_t max_cold_extra_tokens = -1;
    int32_t n_candidates = 1;                // >1: distinct candidates, best first
    // The first candidate is always greedy; the others are sampled at this temperature
    // (with this seed) and must differ from the ones before them.
    float temperature = 0.7f;
    uint64_t seed = 42;
    // > 0: KV chunks of at least this many tokens that moved (the FIM suffix after an edit)
    // are reused by shifting their positions, as llama.cpp's cache reuse does: much faster
    // after an edit, but not bitwise the cold result (docs/session-cache.md measures both).
    int32_t chunk_reuse_min = 0;
    // KV slots the document may hold (one per place worked at in a long file; see
    // inference::session_cache::pick_slot).
    int32_t slots_per_document = 1;
    // Single-line, at the start of a line that has text: a first candidate that only writes that
    // line again is generated once more without the token that began the repeat.
    bool retry_repeated_line = true;
    // A warm-up: the prompt goes into the document's slot and nothing is generated (no
    // candidates). Its window is the one a request arriving now would get (the prompt budget
    // shortens it alike; prompt_budget 0: the whole window), and it takes no room another slot
    // holds: where the KV budget is full, it is skipped.
    bool prefill_only = false;
};

struct generation_timings {
    int32_t n_prompt_tokens = 0;   // tokens in the prompt
    int32_t n_cached_tokens = 0;   // of those, reused from the KV cache (not evaluated)
    int32_t n_shifted_tokens = 0;  // of the cached, moved from elsewhere in the slot (chunk reuse)
    int32_t n_generated = 0;       // tokens generated, all candidates together
    double t_prompt_ms = 0;        // evaluating the prompt tokens that were not cached
    double t_generate_ms = 0;      // decoding the generated tokens
    int32_t n_window_shortened = 0;  // steps the FIM window was shortened for the prompt budget
    int32_t n_extra_dropped = 0;   // other files' chunks left out (oldest first) to fit the context
    int32_t n_drafted = 0;         // speculation's guesses verified while generating (0 with it off)
    int32_t n_draft_accepted = 0;  // of those, the ones kept
    int32_t n_evaluated = 0;       // prompt positions this call computed (a retried line's included)
    // Of an answered completion: the positions computed for its document since the one answered
    // before it, this call's and those of the requests cancelled in between (a typing burst);
    // warm-ups are not counted here.
    int32_t n_burst_evaluated = 0;
};

struct completion_candidate {
    std::string text;              // UTF-8 to insert at the cursor
    double mean_logprob = 0;       // ranking score (higher is better)
    stop_reason stop = stop_reason::end_of_generation;
};

struct completion {
    std::vector<completion_candidate> candidates;  // best first; may be empty
    generation_timings timings;
};

struct chat_message {
    std::string role;      // "system", "user" or "assistant"
    std::string content;
};

struct chat_request {
    std::string uri;                         // the document it is about (may key a KV slot); may be empty
    std::vector<chat_message> messages;      // formatted with the model's chat template by the engine
    int32_t n_predict = 512;
    std::chrono::milliseconds time_budget{60000};
    float temperature = 0.0f;
    uint64_t seed = 42;
    bool show_reasoning = false;             // a reasoning block folded (inference/prompt/reasoning_filter.h); else hidden
};

struct chat_answer {
    std::string text;
    stop_reason stop = stop_reason::end_of_generation;
    generation_timings timings;
};

// A next-edit prediction (daemon/pipeline/next_edit_pipeline.h): the model writes `window`
// again as it will be after the edit that follows `edits`, in the prompt format of its family
// (inference/prompt/next_edit_format.h). Greedy; ends at the format's end (a closing fence, a
// file separator), or at the token bound (then the rewrite is not read).
struct next_edit_hunk {
    uint32_t line = 0;        // 0-based line of the file where it applies
    std::string original;     // whole lines before it
    std::string updated;      // and after it
};

struct next_edit_request {
    std::string uri;                     // the document; keys its next-edit KV slot
    std::string path;                    // the file's path as shown to the model
    std::string language_id;
    std::string context;                 // the file around the window (formats that show it)
    std::vector<next_edit_hunk> edits;   // oldest first
    std::string window_before;           // the window before the latest edit
    std::string window;                  // the window now, whole lines
    size_t cursor = 0;                   // byte offset of the cursor in window
    // Generated tokens at most: the window's tokens plus this share of them and a margin
    // (a rewrite longer than that is no next edit).
    double max_growth = 0.25;
    int32_t margin_tokens = 16;
    std::chrono::milliseconds time_budget{2000};
    // A warm-up: the prompt into the slot, nothing generated (as fim_request::prefill_only).
    bool prefill_only = false;
};

struct next_edit_answer {
    std::optional<std::string> window;   // the rewrite; nullopt: none could be read
    std::string family;                  // the prompt format used ("instruct", "sweep")
    stop_reason stop = stop_reason::end_of_generation;
    generation_timings timings;
};

// Where completions and chats are computed (daemon/engine/fallback_model_service.h).
struct engine_state {
    std::string kind = "local";    // "local", or "remote" (a remote engine, the local model as fallback)
    std::string remote_url;
    std::string remote_api;        // "openai" or "llama-server"
    std::string serving = "local"; // who answered the last request: "remote" or "local"
    std::string last_error;        // why the remote did not answer the last time it failed ("": never)
    std::string last_failure;      // its kind (sse_failure_name), "" when the last request went well
    uint64_t remote_answers = 0;   // requests the remote answered
    uint64_t fallbacks = 0;        // requests the local model answered because the remote failed
    double last_remote_ms = 0;     // the remote's last answer, request to end
};

// Where the local model's layers run (inference/device/layer_plan.h), as hearth/status reports it.
struct offload_status {
    std::string gpu_layers = "auto";  // what was asked: --gpu-layers, config gpu-layers
    std::string backend;              // "Vulkan", "CUDA"; "" when every layer runs on the CPU
    std::string device;               // the device's name
    int32_t n_layer = 0;              // the model's layers
    int32_t n_layers = 0;             // on the device: [n_layer - n_layers, n_layer)
    uint64_t device_memory_bytes = 0; // the device's memory, as its backend reports it
    uint64_t weight_bytes = 0;        // the offloaded layers' weights, uploaded at load
    uint64_t kv_bytes = 0;            // the KV rows the slots hold on the device now
    uint64_t planned_bytes = 0;       // the plan's total: weights, KV of its slots, compute buffers
    int32_t planned_slots = 0;        // the full-context slots the plan keeps room for
    // Why every layer runs on the CPU: no device or driver, a refused cache type, or the device
    // failing at run time ("" when the layers are on the device or none were asked for).
    std::string cpu_reason;
};

struct model_status {
    bool loaded = false;
    std::string model_name;        // general.name, else the file name
    std::string model_path;
    std::string architecture;      // general.architecture
    std::string next_edit_format;  // the next-edit prompt's family: "instruct", "sweep", "none"
    uint64_t mapped_bytes = 0;     // size of the memory-mapped model file
    uint64_t n_params = 0;
    int32_t n_ctx = 0;             // context length per slot
    std::string cache_type;        // "f16", "q8_0", "q4_0", or K/V: "f16/q8_0"
    uint64_t kv_budget_bytes = 0;
    uint64_t kv_used_bytes = 0;
    uint64_t memory_limit_bytes = 0;   // the limit the default KV budget was derived from (0: unknown)
    std::string memory_limit_source;   // where it was found: "physical memory", "RLIMIT_AS", a cgroup file
    int32_t n_slots = 0;           // per-file KV slots that exist
    int64_t tokens_held = 0;       // positions held over every slot
    uint64_t cache_requests = 0;   // slot acquisitions
    uint64_t cache_hits = 0;       // ... that found their slot
    uint64_t tokens_reused = 0;    // prompt positions kept from the cache, over all requests
    uint64_t tokens_evaluated = 0; // prompt positions computed
    uint64_t evictions = 0;
    uint64_t slots_saved = 0, slots_restored = 0, slots_rejected = 0;   // slot store
    int32_t n_slots_max = 0;       // slots that fit the budget at full context
    int32_t n_threads = 0;
    generation_timings last;       // the last finished call
    uint64_t windows_shortened = 0;    // completions whose window was shortened for the prompt budget
    uint64_t repeats_retried = 0;      // first lines that repeated the cursor's line, asked again (fim_request)
    uint64_t answers = 0;              // completions answered (not cancelled, not warm-ups)
    uint64_t answer_tokens_evaluated = 0;   // their n_burst_evaluated, summed
    uint64_t warm_ups = 0;             // warm-ups run (fim_request::prefill_only), stopped ones included
    uint64_t warm_ups_skipped = 0;     // ... not run: their slot would have taken another's room
    uint64_t warm_up_tokens = 0;       // positions they computed
    double prompt_tokens_per_s = 0;    // of the last call (0 if none)
    double generate_tokens_per_s = 0;  // of the last call (0 if none)
    engine_state engine;
    offload_status offload;
};

// A completion's prompt as text, for an engine that takes raw prompts (the remote's
// /v1/completions): FIM tokens written out, and the texts that end a fill.
struct completion_prompt {
    std::string prompt;
    std::vector<std::string> stop;
};

class model_service {
public:
    virtual ~model_service() = default;

    // Fill-in-the-middle completion at the cursor between prefix and suffix.
    // on_piece streams the first candidate's pieces.
    virtual result<completion> complete(const fim_request & req, std::stop_token stop,
                                        const piece_callback & on_piece) = 0;

    // An instruct answer to the messages, streamed piece by piece through on_piece.
    virtual result<chat_answer> chat(const chat_request & req, std::stop_token stop,
                                     const piece_callback & on_piece) = 0;

    // The window rewritten after the next edit (next_edit_request). An engine that cannot (a
    // remote one, a model with no next-edit format) says so as an error.
    virtual result<next_edit_answer> next_edit(const next_edit_request &, std::stop_token) {
        return fail("this engine does not predict next edits");
    }

    // The document is closed in every connection: its KV slot may be freed.
    virtual void release_document(std::string_view uri) = 0;

    // Thread-safe snapshot; never waits for a running generation.
    virtual model_status status() const = 0;

    // The model's tokens for text (BOS/EOS as the model adds them when add_special; special
    // tokens written in the text parsed when parse_special), and the text of tokens (an id
    // outside the vocabulary is an error). Any thread: the vocabulary is read-only.
    virtual result<std::vector<int32_t>> tokenize(std::string_view text, bool add_special, bool parse_special) const = 0;
    virtual result<std::string> detokenize(std::span<const int32_t> ids) const = 0;

    // The prompt complete() would evaluate for req, as text (special tokens written out),
    // fitted to the context as complete() fits it. Any thread.
    virtual result<completion_prompt> completion_prompt_text(const fim_request &) const {
        return fail("this engine has no vocabulary to write a FIM prompt with");
    }

    // Writes what should survive a restart (the KV slots, where persistence is on). Called
    // once when the daemon stops, after the compute worker has finished.
    virtual hearth::status persist() { return {}; }
};

// What the daemon's command line and config file say about the model.
struct engine_options {
    std::string model_path;
    int32_t n_threads = 0;            // 0: the number of physical cores
    std::string cache_type = "f16";   // KV cache type: f16, q8_0, q4_0, or K/V as f16/q8_0 (the daemon passes its config)
    uint64_t kv_budget_bytes = 0;     // 0: the engine picks, below the process's memory limit (daemon/engine/memory_limit.h)
    int32_t n_ctx = 0;                // 0: the model's trained context, capped by the engine
    std::string chat_template;        // "": from the model's tokenizer.chat_template; else a name (chatml, llama2, ...)
    std::string gpu_layers = "auto";  // the last layers on a GPU: N, "all" or "auto" (inference/device/layer_plan.h's default)
    // Asked before `auto` opens a backend (inference::load_options::gpu_probe): the hearth executable
    // sets its child-process probe (daemon/cli/gpu_probe.h); unset, the backends open in-process.
    std::function<std::optional<std::string>()> gpu_probe;
    // Speculative decoding of completions (inference/decode/speculate.h; never changes the output):
    // off, lookup (n-grams of the prompt itself), draft (a small model of the same vocabulary,
    // draft_model), both. Lookup by default: docs/benchmarks.md, "Speculative decoding".
    std::string speculate = "lookup";
    std::string draft_model;          // GGUF of the draft (draft and both)
    std::string slot_dir;             // KV slots persist under this directory; "": not at all
    uint64_t slot_disk_budget_bytes = 1ull << 30;   // slot files of this model kept after persist()
};

// Loads the model (maps, validates, warms the thread pool) and returns the service.
// Implemented in daemon/engine/model_service_engine.cpp with the inference engine.
// Called once at daemon start, from the main thread; an error says what failed to load.
result<std::unique_ptr<model_service>> make_engine_model_service(const engine_options & opts);

}  // namespace hearth::daemon
