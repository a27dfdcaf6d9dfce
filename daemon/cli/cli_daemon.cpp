// `hearth daemon`: parse options (config file first, command line over it), set up
// logging, load the model, and run the daemon_server in the foreground.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "daemon/cli/cli_commands.h"
#include "daemon/cli/gpu_probe.h"
#include "daemon/cli/daemon_options.h"
#include "daemon/settings/config.h"
#include "daemon/server/daemon_server.h"
#include "daemon/server/logging.h"
#include "daemon/engine/model_path.h"
#include "daemon/engine/fallback_model_service.h"
#include "daemon/engine/model_service.h"
#include "inference/session/slot_store.h"

namespace hearth::daemon {

namespace {

struct daemon_flags {
    daemon_options common;   // the ones `hearth lsp` forwards too
    std::optional<int32_t> tcp, http;
    std::optional<std::string> http_token_file;
    bool http_no_token = false;
    bool stdio = false;
    bool listen_any = false;
};

int run_daemon_command(const daemon_flags & f) {
    daemon_config cfg;
    const std::string config_file = f.common.config.value_or(default_config_file());   // named when no model is found
    if (auto s = load_command_config(f.common.config, cfg); !s) {
        std::fprintf(stderr, "hearth daemon: %s\n", s.message().c_str());
        return 2;
    }
    if (auto s = apply_daemon_options(f.common, cfg); !s) {
        std::fprintf(stderr, "hearth daemon: %s\n", s.message().c_str());
        return 2;
    }
    if (f.tcp) cfg.tcp_port = *f.tcp;
    if (f.http) cfg.http_port = *f.http;
    if (f.http_token_file) cfg.http_token_file = *f.http_token_file;
    if (f.http_no_token) cfg.http_no_token = true;
    if (f.listen_any) cfg.listen_any = true;
    if (f.stdio) {
        cfg.stdio = true;
        // An editor that spawns `hearth daemon --stdio` wants its own server: no shared
        // socket unless one is asked for.
        if (!f.common.socket) cfg.socket_path = "none";
    }
    if (auto s = validate(cfg); !s) {
        std::fprintf(stderr, "hearth daemon: %s\n", s.message().c_str());
        return 2;
    }
    const std::string log_file = cfg.log_file == "none" ? "" : cfg.log_file.empty() ? default_log_file() : cfg.log_file;
    if (auto s = setup_logging(cfg.log_level, log_file); !s) {
        std::fprintf(stderr, "hearth daemon: %s\n", s.message().c_str());
        return 2;
    }
    // The same lookup as every command; an editor's `hearth lsp` names no model.
    auto model_path = resolve_model_path(f.common.model.value_or(""), cfg.model_path, config_file);
    if (model_path) cfg.model_path = *model_path;
    std::unique_ptr<model_service> model;
    if (model_path) {
        engine_options eo;
        eo.model_path = cfg.model_path;
        eo.n_threads = cfg.threads;
        if (auto types = kv_cache_types(cfg)) eo.cache_type = inference::kv_types_name(*types);   // validated above
        eo.kv_budget_bytes = cfg.kv_budget_bytes;
        eo.chat_template = cfg.chat_template;
        eo.gpu_layers = cfg.gpu_layers;
        eo.gpu_probe = probe_no_gpu;
        eo.speculate = cfg.speculate;
        eo.draft_model = cfg.draft_model;
        eo.slot_disk_budget_bytes = cfg.slot_disk_budget_bytes;
        if (cfg.slot_dir != "none") {
            auto dir = cfg.slot_dir.empty() ? inference::default_slot_dir() : result<std::string>(cfg.slot_dir);
            if (dir) eo.slot_dir = *dir;
            else spdlog::warn("KV slots will not be persisted: {}", dir.message());
        }
        auto m = make_engine_model_service(eo);
        if (!m) {
            spdlog::critical("cannot load the model: {}", m.message());
            return 1;
        }
        model = std::move(*m);
        const auto st = model->status();
        spdlog::info("model {} ({} bytes mapped, {} threads, KV {} budget {} bytes)", st.model_name, st.mapped_bytes,
                     st.n_threads, st.cache_type, st.kv_budget_bytes);
    } else {
        spdlog::warn("{}: completion and chat will answer errors", model_path.message());
    }
    if (cfg.remote.engine == "remote") {
        auto m = make_remote_engine(cfg.remote, std::move(model));
        if (!m) {
            spdlog::critical("engine = remote: {}", m.message());
            return 1;
        }
        model = std::move(*m);
        spdlog::info("engine remote: {} ({}){}", cfg.remote.url, cfg.remote.api,
                     model->status().model_path.empty() ? ", no local fallback" : ", the local model as fallback");
    }
    daemon_server server(cfg, std::move(model));
    if (auto s = server.start(); !s) {
        spdlog::critical("{}", s.message());
        return 1;
    }
    // Started by `hearth lsp`: tell it we listen (it waits on this pipe, not by polling).
    if (const char * ready = std::getenv("HEARTH_READY_FD")) {
        const int fd = std::atoi(ready);
        if (fd > 2 && ::write(fd, "1", 1) != 1) spdlog::warn("HEARTH_READY_FD {}: {}", fd, std::strerror(errno));
        if (fd > 2) ::close(fd);
        ::unsetenv("HEARTH_READY_FD");
    }
    return server.run();
}

}  // namespace

void add_daemon_command(CLI::App & app, cli_state & state) {
    auto * cmd = app.add_subcommand("daemon", "Run the hearth daemon in the foreground");
    auto f = std::make_shared<daemon_flags>();
    add_daemon_options(cmd, f->common, "");
    cmd->add_option("--tcp", f->tcp, "Also listen on this loopback TCP port (0: any free port); needs the token")
        ->check(CLI::Range(0, 65535));
    cmd->add_option("--http", f->http, "Serve the HTTP API (llama-server's and OpenAI's, docs/http.md) on this loopback port (0: any free port)")
        ->check(CLI::Range(0, 65535));
    cmd->add_option("--http-token-file", f->http_token_file, "Bearer token the HTTP API requires (default: the TCP token file)");
    cmd->add_flag("--http-no-token", f->http_no_token, "Serve the HTTP API without a bearer token (any local process may use it)");
    cmd->add_flag("--listen-any", f->listen_any, "Listen for TCP on all interfaces instead of loopback only");
    cmd->add_flag("--stdio", f->stdio, "Serve one client on stdin/stdout and exit when it leaves");
    cmd->callback([f, &state] { state.exit_code = run_daemon_command(*f); });
}

}  // namespace hearth::daemon
