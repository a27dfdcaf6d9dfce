// remote_model_service: completions and chats from an OpenAI-compatible engine over HTTP
// (vLLM, SGLang, TGI, llama-server, llama-cpp-python's server, another hearth with --http).
// The daemon keeps everything next to the editor (documents, FIM windows, extra context,
// typed-ahead memory, debounce, cancellation, cleanup); this sends the window and streams
// the answer back, applying the same line rules as the local engine (and closing the
// request the moment they end it, or the editor cancels).
//  - remote_api::openai: POST /v1/completions with the raw FIM prompt the local model's
//    tokens spell (so the remote must run a model of the same FIM family), extra context
//    first so that the remote's prefix cache (vLLM's automatic prefix caching) hits;
//    POST /v1/chat/completions for chats.
//  - remote_api::llama_server: POST /infill (input_prefix, input_suffix, input_extra,
//    cache_prompt): the server lays out the FIM prompt of its own model; chats as above.
// Errors (unreachable, a refused key, a malformed stream, the time budget) come back as
// result errors whose message says which; last_failure() tells the kind to the fallback.
// Thread-safety: as model_service (complete/chat on the compute worker; status any thread).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

#include "daemon/engine/model_service.h"
#include "daemon/engine/sse_client.h"

namespace hearth::daemon {

enum class remote_api { openai, llama_server };
result<remote_api> parse_remote_api(std::string_view name);

struct remote_options {
    std::string url;              // base URL: http(s)://host:port (a trailing /v1 is accepted)
    remote_api api = remote_api::openai;
    std::string model;            // the "model" field of each request ("": left out)
    std::string api_key;          // sent as a bearer token ("": none)
    // The first piece of an answer must come within this; else the request is closed and
    // the fallback answers from the local model.
    std::chrono::milliseconds first_piece_budget{1500};
};

// The raw FIM prompt and stop strings for openai's /v1/completions, built from a local
// model's tokens (model_service::completion_prompt_text).
using prompt_text_builder = std::function<result<completion_prompt>(const fim_request &)>;

class remote_model_service final : public model_service {
public:
    remote_model_service(remote_options opts, prompt_text_builder build_prompt);

    result<completion> complete(const fim_request & req, std::stop_token stop, const piece_callback & on_piece) override;
    result<chat_answer> chat(const chat_request & req, std::stop_token stop, const piece_callback & on_piece) override;
    void release_document(std::string_view) override {}
    model_status status() const override;   // loaded; the engine fields name the remote
    result<std::vector<int32_t>> tokenize(std::string_view, bool, bool) const override;
    result<std::string> detokenize(std::span<const int32_t>) const override;

    // The kind of the last complete()'s or chat()'s failure (none after a success).
    sse_failure last_failure() const { return last_failure_.load(); }
    const remote_options & options() const { return opts_; }

private:
    // Streams one request; `on_text` gets each piece of the answer's text and returns false
    // to end the stream; `finished` is set when the remote said the answer is complete.
    sse_outcome stream(const std::string & path, const std::string & body, std::stop_token stop,
                       std::chrono::steady_clock::time_point end, bool chat, const std::function<bool(std::string_view)> & on_text,
                       bool & finished, std::string & stream_error);

    remote_options opts_;
    prompt_text_builder build_prompt_;
    std::atomic<sse_failure> last_failure_{sse_failure::none};
    mutable std::mutex mu_;
    generation_timings last_;   // guarded by mu_
};

}  // namespace hearth::daemon
