// `hearth complete` and `hearth chat`: one-shot inline completion and chat from the command
// line, on the same engine and prompts the daemon uses.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include "daemon/cli/cli_commands.h"
#include "daemon/cli/gpu_probe.h"
#include "daemon/engine/model_path.h"
#include "daemon/engine/model_service.h"
#include "daemon/pipeline/chat_pipeline.h"
#include "daemon/settings/config.h"
#include "inference/decode/completion_rules.h"
#include "inference/decode/draft_model.h"
#include "inference/decode/generate.h"
#include "inference/load/loaded_model.h"
#include "inference/prompt/fim.h"
#include "inference/session/sequence.h"

namespace hearth::daemon {
namespace {

struct model_flags {
    std::string model;
    int32_t threads = 0;
    std::string cache_type = inference::k_default_cache_type;
    std::string cache_type_k, cache_type_v;   // empty: cache_type's
    int32_t ctx = 4096;
    int32_t n_predict = 64;
    float temperature = 0.0f;
    uint64_t seed = 42;
    bool verbose = false;
    std::string chat_template;
    std::string speculate;   // empty: draft when a draft model is given, else off
    std::string draft;
    std::string gpu_layers = inference::k_default_gpu_layers;
};

void add_model_flags(CLI::App * cmd, model_flags & f) {
    cmd->add_option("-m,--model", f.model, "GGUF model file (default: $HEARTH_MODEL, then the downloaded default model)");
    cmd->add_option("-t,--threads", f.threads, "compute threads (default: physical cores)");
    cmd->add_option("--cache-type", f.cache_type, "KV cache type: f32, f16, q8_0, q4_0, or K/V as f16/q8_0")->capture_default_str();
    cmd->add_option("--cache-type-k", f.cache_type_k, "KV cache type of K alone (default: --cache-type's)");
    cmd->add_option("--cache-type-v", f.cache_type_v, "KV cache type of V alone (default: --cache-type's)");
    cmd->add_option("-c,--ctx", f.ctx, "context size in tokens")->capture_default_str();
    cmd->add_option("-n,--n-predict", f.n_predict, "maximum tokens to generate")->capture_default_str();
    cmd->add_option("--temp", f.temperature, "sampling temperature (0: greedy)")->capture_default_str();
    cmd->add_option("--seed", f.seed, "random seed for sampling")->capture_default_str();
    cmd->add_option("--chat-template", f.chat_template, "chat format: chatml, gemma, llama3, llama2, mistral, phi3, deepseek, deepseek-r1, granite (default: from the model; refused when the vocabulary lacks its tokens)");
    cmd->add_option("--gpu-layers", f.gpu_layers, "the last layers to run on a GPU: N, all or auto (a real GPU only; 0: none)")->capture_default_str();
    cmd->add_flag("-v,--verbose", f.verbose, "print timings (prompt and generation speed) to stderr");
}

// The three cache type flags as one setting ("f16", "f16/q8_0").
result<std::string> cache_types(const model_flags & f) {
    auto t = inference::parse_cache_types(f.cache_type, f.cache_type_k, f.cache_type_v);
    if (!t) return t.error();
    return inference::kv_types_name(*t);
}

result<std::unique_ptr<inference::loaded_model>> load(const model_flags & f) {
    auto path = resolve_model_path(f.model);
    if (!path) return path.error();
    auto types = cache_types(f);
    if (!types) return types.error();
    inference::load_options opts;
    opts.model_path = *path;
    opts.n_threads = f.threads;
    opts.cache_type = *types;
    opts.n_ctx = f.ctx;
    opts.chat_template = f.chat_template;
    opts.gpu_layers = f.gpu_layers;
    opts.gpu_probe = probe_no_gpu;
    return inference::loaded_model::load(opts);
}

result<std::string> read_file(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail("cannot read '", path, "'");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// "FILE:LINE:COL", 1-based line and column (a column counts bytes). The cursor goes before
// the character at COL; COL one past the end of the line is the end of the line.
struct cursor_spec {
    std::string file;
    int64_t line = 0, col = 0;
};

result<cursor_spec> parse_cursor(const std::string & spec) {
    const auto c2 = spec.rfind(':');
    const auto c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : spec.rfind(':', c2 - 1);
    if (c1 == std::string::npos) return fail("'", spec, "' is not FILE:LINE:COL");
    cursor_spec c;
    c.file = spec.substr(0, c1);
    try {
        c.line = std::stoll(spec.substr(c1 + 1, c2 - c1 - 1));
        c.col = std::stoll(spec.substr(c2 + 1));
    } catch (const std::exception &) {
        return fail("'", spec, "': LINE and COL must be numbers");
    }
    if (c.line < 1 || c.col < 1) return fail("'", spec, "': LINE and COL start at 1");
    return c;
}

result<size_t> cursor_offset(const std::string & text, const cursor_spec & c) {
    size_t off = 0;
    for (int64_t l = 1; l < c.line; ++l) {
        const auto nl = text.find('\n', off);
        if (nl == std::string::npos) return fail(c.file, " has fewer than ", c.line, " lines");
        off = nl + 1;
    }
    const auto eol = std::min(text.find('\n', off), text.size());
    if (static_cast<size_t>(c.col - 1) > eol - off)
        return fail(c.file, ":", c.line, " has ", eol - off, " columns; column ", c.col, " is past its end");
    return off + static_cast<size_t>(c.col - 1);
}

void print_timings(const inference::prefill_stats & pf, const inference::generation_result & gen,
                   inference::speculate_mode mode) {
    const double pp = pf.t_ms > 0 ? pf.n_evaluated * 1000.0 / pf.t_ms : 0;
    const double tg = gen.t_ms > 0 ? gen.tokens.size() * 1000.0 / gen.t_ms : 0;
    std::fprintf(stderr, "\nprompt: %d tokens (%d evaluated) in %.1f ms, %.1f t/s\n", pf.n_prompt, pf.n_evaluated,
                 pf.t_ms, pp);
    std::fprintf(stderr, "generated: %zu tokens in %.1f ms, %.1f t/s (stopped: %s)\n", gen.tokens.size(), gen.t_ms, tg,
                 std::string(inference::finish_reason_name(gen.finish)).c_str());
    const auto & sp = gen.speculation;
    if (mode != inference::speculate_mode::off)
        std::fprintf(stderr, "speculation: %s, %d of %d guesses kept (%.1f %%; %d computed), %.2f tokens per target pass (%d passes), draft %.1f ms\n",
                     std::string(inference::speculate_mode_name(mode)).c_str(), sp.n_accepted, sp.n_accepted + sp.n_rejected,
                     100.0 * sp.acceptance(), sp.n_drafted, sp.tokens_per_pass(), sp.n_target_passes, sp.t_draft_ms);
}

// Prefill + generate with streaming to stdout; returns the process exit code.
int run_generation(inference::loaded_model & lm, const std::vector<inference::token_id> & prompt,
                   inference::generation_params params, const model_flags & f) {
    auto & eng = lm.eng();
    if (!lm.warning().empty()) std::fprintf(stderr, "hearth: %s\n", lm.warning().c_str());
    if (f.verbose && eng.device() && lm.offload())
        std::fprintf(stderr, "offload: %s\n", inference::describe(*lm.offload()).c_str());
    else if (f.verbose && lm.gpu_layers() == "auto")   // N and all have said why in warning()
        std::fprintf(stderr, "offload: --gpu-layers %s: none (%s)\n", lm.gpu_layers().c_str(), lm.cpu_reason().c_str());
    auto mode = inference::parse_speculate_mode(f.speculate.empty() ? (f.draft.empty() ? "off" : "draft") : f.speculate);
    if (!mode) { std::fprintf(stderr, "hearth: %s\n", mode.message().c_str()); return 2; }
    std::unique_ptr<inference::draft_model> draft;
    if (!f.draft.empty()) {
        auto d = inference::draft_model::load(f.draft, lm.vocab(), lm.pool());
        if (!d) { std::fprintf(stderr, "hearth: %s\n", d.message().c_str()); return 1; }
        draft = std::move(*d);
    }
    std::optional<inference::sequence> draft_seq;
    if (draft) draft_seq.emplace(draft->eng().make_cache(lm.cache_types(), lm.n_ctx()));
    params.speculation = inference::make_speculation(*mode, draft.get(), draft_seq ? &*draft_seq : nullptr);
    inference::sequence seq(eng.make_cache(lm.cache_types(), lm.n_ctx()));
    if (static_cast<int64_t>(prompt.size()) + params.n_predict > lm.n_ctx()) {
        std::fprintf(stderr, "hearth: the prompt (%zu tokens) and %d new tokens do not fit the context of %d\n",
                     prompt.size(), params.n_predict, lm.n_ctx());
        return 1;
    }
    std::vector<float> logits;
    auto pf = inference::prefill(eng, seq, prompt, logits);
    if (!pf) {
        std::fprintf(stderr, "hearth: %s\n", pf.message().c_str());
        return 1;
    }
    auto gen = inference::generate(eng, lm.vocab(), seq, logits, params, {}, [](std::string_view piece) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
    });
    if (!gen) {
        std::fprintf(stderr, "\nhearth: %s\n", gen.message().c_str());
        return 1;
    }
    std::fputc('\n', stdout);
    if (!eng.device_error().empty()) std::fprintf(stderr, "hearth: %s\n", eng.device_error().c_str());
    if (f.verbose) print_timings(*pf, *gen, *mode);
    return 0;
}

}  // namespace

void add_generate_commands(CLI::App & app, cli_state & state) {
    // hearth complete
    auto * complete = app.add_subcommand("complete", "Fill-in-the-middle completion at a point of a file, or of raw text");
    auto * cf = new model_flags;
    auto * where = new std::string;
    auto * raw = new std::string;
    auto * suffix = new std::string;
    add_model_flags(complete, *cf);
    complete->add_option("position", *where, "FILE:LINE:COL (1-based) where the cursor is");
    complete->add_option("--prompt", *raw, "complete this text instead (the cursor is at its end)");
    complete->add_option("--suffix", *suffix, "with --prompt: the text after the cursor");
    complete->add_option("--speculate", cf->speculate, "speculative decoding: off, lookup, draft, both (default: draft with --draft, else off)");
    complete->add_option("--draft", cf->draft, "draft model for --speculate draft or both (a GGUF file of the same vocabulary)");
    complete->callback([&state, cf, where, raw, suffix] {
        if (where->empty() == raw->empty()) {
            std::fprintf(stderr, "hearth complete: give either FILE:LINE:COL or --prompt TEXT\n");
            state.exit_code = 2;
            return;
        }
        inference::fim_input in;
        if (!where->empty()) {
            auto c = parse_cursor(*where);
            if (!c) { std::fprintf(stderr, "hearth complete: %s\n", c.message().c_str()); state.exit_code = 2; return; }
            auto text = read_file(c->file);
            if (!text) { std::fprintf(stderr, "hearth complete: %s\n", text.message().c_str()); state.exit_code = 1; return; }
            auto off = cursor_offset(*text, *c);
            if (!off) { std::fprintf(stderr, "hearth complete: %s\n", off.message().c_str()); state.exit_code = 2; return; }
            in.prefix = text->substr(0, *off);
            in.suffix = text->substr(*off);
            in.path = c->file;
        } else {
            in.prefix = *raw;
            in.suffix = *suffix;
        }
        auto lm = load(*cf);
        if (!lm) { std::fprintf(stderr, "hearth: %s\n", lm.message().c_str()); state.exit_code = 1; return; }
        auto prompt = inference::build_completion_prompt((*lm)->vocab(), in);
        if (!prompt) { std::fprintf(stderr, "hearth complete: %s\n", prompt.message().c_str()); state.exit_code = 1; return; }
        inference::generation_params params;
        params.n_predict = cf->n_predict;
        params.sampling.temperature = cf->temperature;
        params.sampling.seed = cf->seed;
        params.rule = inference::make_completion_rule(inference::guess_line_mode(in.prefix, in.suffix), in.prefix, in.suffix);
        params.end_tokens = inference::fim_end_tokens((*lm)->vocab());
        state.exit_code = run_generation(**lm, *prompt, params, *cf);
    });

    // hearth chat
    auto * chat = app.add_subcommand("chat", "Ask a question, optionally about a selection of a file; the answer streams");
    auto * hf = new model_flags;
    hf->n_predict = 256;
    auto * question = new std::string;
    auto * file = new std::string;
    auto * lines = new std::string;
    add_model_flags(chat, *hf);
    chat->add_option("question", *question, "what to ask")->required();
    chat->add_option("--file", *file, "a file the question is about");
    chat->add_option("--lines", *lines, "with --file: the selection, as A-B (1-based, inclusive)");
    auto * system = new std::string(chat_settings{}.system_prompt);
    chat->add_option("--system", *system, "the system message (\"\": none)")->capture_default_str();
    auto * show_reasoning = new bool(false);
    chat->add_flag("--show-reasoning", *show_reasoning, "a reasoning model's <think> block folded into <details> (default: hidden)");
    // The daemon's chat pipeline: the same messages hearth/chat sends for an "ask about the
    // selection", the same engine and template.
    chat->callback([&state, hf, question, file, lines, system, show_reasoning] {
        chat_input in;
        in.intent = chat_intent::ask;
        in.prompt = *question;
        if (!file->empty()) {
            auto text = read_file(*file);
            if (!text) { std::fprintf(stderr, "hearth chat: %s\n", text.message().c_str()); state.exit_code = 1; return; }
            int64_t a = 1, b = std::numeric_limits<int32_t>::max();
            if (!lines->empty() && (std::sscanf(lines->c_str(), "%ld-%ld", &a, &b) != 2 || a < 1 || b < a)) {
                std::fprintf(stderr, "hearth chat: --lines '%s' is not A-B with 1 <= A <= B\n", lines->c_str());
                state.exit_code = 2;
                return;
            }
            chat_settings defaults;
            in = selection_of_lines(*text, a - 1, b - 1, lines->empty() ? 0 : defaults.context_lines);
            in.intent = chat_intent::ask;
            in.prompt = *question;
            in.uri = *file;
        }
        auto path = resolve_model_path(hf->model);
        if (!path) { std::fprintf(stderr, "hearth: %s\n", path.message().c_str()); state.exit_code = 1; return; }
        auto types = cache_types(*hf);
        if (!types) { std::fprintf(stderr, "hearth: %s\n", types.message().c_str()); state.exit_code = 2; return; }
        engine_options eo;
        eo.model_path = *path;
        eo.n_threads = hf->threads;
        eo.cache_type = *types;
        eo.n_ctx = hf->ctx;
        eo.chat_template = hf->chat_template;
        eo.gpu_layers = hf->gpu_layers;
        eo.gpu_probe = probe_no_gpu;
        auto engine = make_engine_model_service(eo);
        if (!engine) { std::fprintf(stderr, "hearth: %s\n", engine.message().c_str()); state.exit_code = 1; return; }
        chat_settings settings;
        settings.max_tokens = hf->n_predict;
        settings.system_prompt = *system;
        settings.show_reasoning = *show_reasoning;
        chat_pipeline pipeline(engine->get(), settings);
        chat_request req = pipeline.request_for(in);
        req.temperature = hf->temperature;
        req.seed = hf->seed;
        auto answer = pipeline.run(req, {}, [](std::string_view piece) {
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::fflush(stdout);
        });
        if (!answer) { std::fprintf(stderr, "\nhearth chat: %s\n", answer.message().c_str()); state.exit_code = 1; return; }
        std::fputc('\n', stdout);
        if (hf->verbose) {
            const auto & t = answer->timings;
            std::fprintf(stderr, "\nprompt: %d tokens (%d evaluated) in %.1f ms\ngenerated: %d tokens in %.1f ms, %.1f t/s (stopped: %s)\n",
                         t.n_prompt_tokens, t.n_prompt_tokens - t.n_cached_tokens, t.t_prompt_ms, t.n_generated, t.t_generate_ms,
                         t.t_generate_ms > 0 ? t.n_generated * 1000.0 / t.t_generate_ms : 0.0,
                         std::string(stop_reason_name(answer->stop)).c_str());
        }
        state.exit_code = 0;
    });
}

}  // namespace hearth::daemon
