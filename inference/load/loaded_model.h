// loaded_model: everything that must live as long as a model is in use — the mapped file,
// the validated model, its vocabulary, the compute thread pool and the engine — loaded in
// one call so each caller (CLI, daemon, benchmarks) gets the same checks and defaults.
// Thread-safety: owned by the compute worker; the immutable parts (file, model, vocab) may
// be read from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "inference/cache/kv_cache.h"
#include "inference/device/layer_plan.h"
#include "inference/forward/engine.h"
#include "inference/gguf/gguf_file.h"
#include "inference/model/model.h"
#include "inference/prompt/chat_template.h"
#include "inference/prompt/next_edit_format.h"
#include "inference/tokenizer/vocab.h"
#include "kernels/thread_pool.h"

namespace hearth::inference {

struct load_options {
    std::string model_path;
    int32_t n_threads = 0;            // 0: physical cores
    std::string cache_type = k_default_cache_type;  // f32, f16, q8_0, q4_0, or K/V as f16/q8_0 (parse_cache_types)
    int32_t n_ctx = 0;                // 0: the model's trained context, capped at k_default_ctx_cap
    int32_t n_batch = 256;
    std::string chat_template;        // empty: detect from the file
    // A quantized cache type needs head sizes that are whole blocks (32); with this set, a
    // model whose heads are not uses f16 instead (warning()) rather than refusing to load.
    bool cache_type_fallback = false;
    // The last layers to run on a GPU: "0", "N", "all" or "auto" (layer_device.h). Where no device
    // can take N or all the model runs on the CPU and warning() says why; where `auto` finds no
    // GPU (or only a CPU device) it runs on the CPU quietly, cpu_reason() alone saying why.
    std::string gpu_layers = k_default_gpu_layers;
    // The KV caches of n_ctx positions the device's plan keeps room for (`auto`).
    int32_t device_slots = 1;
    // Asked before `auto` opens any backend: why there is no GPU to use (the CPU runs every layer and
    // no backend is loaded into this process), or nullopt to go on. The daemon's asks a child
    // process (daemon/engine/gpu_probe.h), so a driver that is loaded to find only a CPU device,
    // or that crashes, costs this process nothing. Unset: the backends are opened here.
    std::function<std::optional<std::string>()> gpu_probe;
};

inline constexpr int32_t k_default_ctx_cap = 8192;

class loaded_model {
public:
    static result<std::unique_ptr<loaded_model>> load(const load_options & opts);

    const gguf::gguf_file & file() const { return file_; }
    const model & mdl() const { return model_; }
    const tokenizer::vocab & vocab() const { return vocab_; }
    engine & eng() { return *engine_; }
    kernels::thread_pool & pool() { return *pool_; }
    const kv_types & cache_types() const { return cache_types_; }
    int32_t n_ctx() const { return n_ctx_; }
    // The chat format, or the reason there is none (shown when a chat is asked for).
    const result<chat_format> & chat() const { return chat_; }
    // Why that format: the option, the template's markers or the vocabulary's tokens.
    const std::string & chat_reason() const { return chat_reason_; }
    // The next-edit prompt's family (next_edit_format.h), chosen from the name and the chat format.
    const next_edit_format & next_edit() const { return next_edit_; }
    const std::string & name() const { return name_; }
    const std::string & path() const { return path_; }
    // What load() changed from the options (empty when nothing), for the caller to log.
    const std::string & warning() const { return warning_; }
    // Where the layers run: the plan the engine's device was placed by, or none (every layer on
    // the CPU) and cpu_reason() says why ("" when no layers were asked for the GPU).
    const std::optional<offload_plan> & offload() const { return offload_; }
    const std::string & cpu_reason() const { return cpu_reason_; }
    const std::string & gpu_layers() const { return gpu_layers_; }   // as asked (load_options::gpu_layers)


private:
    loaded_model(gguf::gguf_file f, model m, tokenizer::vocab v) : file_(std::move(f)), model_(std::move(m)), vocab_(std::move(v)) {}

    gguf::gguf_file file_;
    model model_;
    tokenizer::vocab vocab_;
    std::unique_ptr<kernels::thread_pool> pool_;
    std::unique_ptr<engine> engine_;
    kv_types cache_types_;
    int32_t n_ctx_ = 0;
    result<chat_format> chat_ = fail("no chat template");
    std::string chat_reason_;
    next_edit_format next_edit_;
    std::string name_;
    std::string path_;
    std::string warning_;
    std::optional<offload_plan> offload_;
    std::string cpu_reason_;
    std::string gpu_layers_;
};

}  // namespace hearth::inference
