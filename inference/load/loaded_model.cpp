#include "inference/load/loaded_model.h"

#include <algorithm>
#include <filesystem>

#include "inference/cache/kv_cache.h"

namespace hearth::inference {

result<std::unique_ptr<loaded_model>> loaded_model::load(const load_options & opts) {
    if (opts.model_path.empty()) return fail("no model given: pass --model PATH (or run scripts/fetch-model)");
    auto file = gguf::gguf_file::open(opts.model_path);
    if (!file) return fail(opts.model_path, ": ", file.message());
    auto mdl = model::load(*file);
    if (!mdl) return fail(opts.model_path, ": ", mdl.message());
    auto voc = tokenizer::load_vocab(*file);
    if (!voc) return fail(opts.model_path, ": ", voc.message());
    if (voc->n_tokens() != mdl->hp().n_vocab)
        return fail(opts.model_path, ": the tokenizer has ", voc->n_tokens(), " tokens but token_embd.weight has ",
                    mdl->hp().n_vocab, " rows");
    auto cache_types = parse_cache_types(opts.cache_type);
    if (!cache_types) return cache_types.error();
    std::string warning;
    if (auto s = check_cache_types(*cache_types, mdl->hp().head_dim); !s) {
        if (!opts.cache_type_fallback) return s.error();
        warning = s.message() + "; using f16";
        cache_types = kv_types(kernels::tensor_type::f16);
    }
    if (opts.n_ctx < 0) return fail("context size ", opts.n_ctx, " is negative");
    if (opts.n_batch < 1 || opts.n_batch > 4096) return fail("batch size ", opts.n_batch, " is outside [1, 4096]");
    auto gpu = parse_gpu_layers(opts.gpu_layers);
    if (!gpu) return gpu.error();

    std::unique_ptr<loaded_model> lm(new loaded_model(std::move(*file), std::move(*mdl), std::move(*voc)));
    // model holds pointers into the mapping, which moved with the gguf_file object but not in memory.
    lm->cache_types_ = *cache_types;
    const int32_t trained = lm->model_.hp().n_ctx_train;
    lm->n_ctx_ = opts.n_ctx > 0 ? std::min(opts.n_ctx, trained) : std::min(trained, k_default_ctx_cap);
    lm->pool_ = std::make_unique<kernels::thread_pool>(opts.n_threads);
    lm->engine_ = std::make_unique<engine>(lm->model_, *lm->pool_, opts.n_batch);
    std::optional<std::string> no_gpu;
    if (gpu->how == gpu_layers::kind::automatic && !gpu->cpu_device_ok && opts.gpu_probe) no_gpu = opts.gpu_probe();
    if (no_gpu) {
        lm->cpu_reason_ = *no_gpu;
    } else if (gpu->how != gpu_layers::kind::count || gpu->n > 0) {
        const offload_room room{lm->n_ctx_, std::max(opts.device_slots, 1), opts.n_batch, *cache_types};
        auto dev = make_layer_device(lm->model_, *gpu, room);
        if (dev && !dev->device->takes_cache(*cache_types))
            dev = fail(dev->device->describe(), " cannot hold a KV cache of ", kv_types_name(*cache_types),
                       " for this model (the devices take f16, q8_0 and q4_0); the layers run on the CPU");
        if (dev) {
            lm->engine_->set_layer_device(std::move(dev->device));
            lm->offload_ = std::move(dev->plan);
        } else {
            lm->cpu_reason_ = dev.message();
            // N and all asked for a device; `auto` (the default) without a GPU is the CPU as usual.
            if (gpu->how != gpu_layers::kind::automatic)
                warning = warning.empty() ? dev.message() : warning + "; " + dev.message();
        }
    }
    auto tmpl = lm->file_.get_string("tokenizer.chat_template");
    auto choice = choose_chat_format(opts.chat_template, tmpl && *tmpl ? **tmpl : std::string_view(), lm->vocab_);
    // A format the user asked for must be usable; a model without one still completes code.
    if (!choice && !opts.chat_template.empty()) return choice.error();
    if (choice) {
        lm->chat_ = choice->format;
        lm->chat_reason_ = std::move(choice->reason);
    } else {
        lm->chat_ = choice.error();
    }
    auto name = lm->file_.get_string("general.name");
    lm->name_ = name && *name ? std::string(**name) : std::filesystem::path(opts.model_path).filename().string();
    auto basename = lm->file_.get_string("general.basename");
    lm->next_edit_ = choose_next_edit_format(lm->name_, basename && *basename ? **basename : std::string_view(),
                                             lm->vocab_.find_token("<|file_sep|>") != k_no_token, lm->chat_.has_value());
    lm->path_ = opts.model_path;
    lm->warning_ = std::move(warning);
    lm->gpu_layers_ = opts.gpu_layers;
    return lm;
}

}  // namespace hearth::inference
