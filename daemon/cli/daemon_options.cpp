#include "daemon/cli/daemon_options.h"

namespace hearth::daemon {

void add_daemon_options(CLI::App * cmd, daemon_options & o, const std::string & group) {
    const auto in_group = [&](CLI::Option * opt) { if (!group.empty()) opt->group(group); };
    in_group(cmd->add_option("--model", o.model, "GGUF model file"));
    in_group(cmd->add_option("--socket", o.socket, "Unix socket path ('none': no socket; default <runtime dir>/hearth.sock)"));
    in_group(cmd->add_option("--runtime-dir", o.runtime_dir, "Private directory for the socket, token and locks"));
    in_group(cmd->add_option("--config", o.config, "Config file (default ~/.config/hearth/config.toml)"));
    in_group(cmd->add_option("--log-level", o.log_level, "trace, debug, info, warn, error, critical, off"));
    in_group(cmd->add_option("--log-file", o.log_file, "Rotating log file ('none': stderr only)"));
    in_group(cmd->add_option("--threads", o.threads, "Compute threads (0: one per physical core)")->check(CLI::Range(0, 1024)));
    in_group(cmd->add_option("--cache-type", o.cache_type, "KV cache type: f16, q8_0, q4_0, or K/V as f16/q8_0"));
    in_group(cmd->add_option("--cache-type-k", o.cache_type_k, "KV cache type of K alone (default: --cache-type's)"));
    in_group(cmd->add_option("--cache-type-v", o.cache_type_v, "KV cache type of V alone (default: --cache-type's)"));
    in_group(cmd->add_option("--kv-budget", o.kv_budget, "KV cache memory budget, e.g. 512MiB"));
    in_group(cmd->add_option("--chat-template", o.chat_template,
                             "Chat format when the model has none: chatml, gemma, llama3, llama2, mistral, phi3, deepseek, "
                             "deepseek-r1, granite (refused when the vocabulary lacks its tokens)"));
    in_group(cmd->add_option("--gpu-layers", o.gpu_layers, "The last layers to run on a GPU: N, all or auto (the default: a real GPU only; 0: none)"));
    in_group(cmd->add_option("--speculate", o.speculate, "Speculative decoding of completions: off, lookup, draft, both (default lookup)"));
    in_group(cmd->add_option("--draft", o.draft, "Draft model (GGUF, the same vocabulary) for --speculate draft or both"));
    in_group(cmd->add_option("--slot-dir", o.slot_dir,
                             "Where KV slots persist across restarts ('none': nowhere; default ~/.cache/hearth/slots)"));
}

std::vector<std::string> daemon_arguments(const daemon_options & o) {
    std::vector<std::string> args;
    const auto add = [&](const char * flag, const std::optional<std::string> & v) {
        if (v) args.insert(args.end(), {flag, *v});
    };
    add("--model", o.model);
    add("--socket", o.socket);
    add("--runtime-dir", o.runtime_dir);
    add("--config", o.config);
    add("--log-level", o.log_level);
    add("--log-file", o.log_file);
    if (o.threads) args.insert(args.end(), {"--threads", std::to_string(*o.threads)});
    add("--cache-type", o.cache_type);
    add("--cache-type-k", o.cache_type_k);
    add("--cache-type-v", o.cache_type_v);
    add("--kv-budget", o.kv_budget);
    add("--chat-template", o.chat_template);
    add("--slot-dir", o.slot_dir);
    add("--gpu-layers", o.gpu_layers);
    add("--speculate", o.speculate);
    add("--draft", o.draft);
    return args;
}

status apply_daemon_options(const daemon_options & o, daemon_config & cfg) {
    if (o.runtime_dir) cfg.runtime_dir = *o.runtime_dir;
    if (o.socket) cfg.socket_path = *o.socket;
    if (o.threads) cfg.threads = *o.threads;
    if (o.log_level) cfg.log_level = *o.log_level;
    if (o.log_file) cfg.log_file = *o.log_file;
    if (o.cache_type) {
        // The command line names the whole cache: the config file's halves no longer apply.
        cfg.cache_type = *o.cache_type;
        cfg.cache_type_k.clear();
        cfg.cache_type_v.clear();
    }
    if (o.cache_type_k) cfg.cache_type_k = *o.cache_type_k;
    if (o.cache_type_v) cfg.cache_type_v = *o.cache_type_v;
    if (o.chat_template) cfg.chat_template = *o.chat_template;
    if (o.slot_dir) cfg.slot_dir = *o.slot_dir;
    if (o.gpu_layers) cfg.gpu_layers = *o.gpu_layers;
    if (o.speculate) cfg.speculate = *o.speculate;
    if (o.draft) cfg.draft_model = *o.draft;
    if (o.kv_budget) {
        auto b = parse_bytes(*o.kv_budget);
        if (!b) return fail("--kv-budget: ", b.message());
        cfg.kv_budget_bytes = *b;
    }
    return {};
}

}  // namespace hearth::daemon
