#include "daemon/cli/cli_bench_editor.h"

#include <cstdio>
#include <string>
#include <vector>

#include "daemon/cli/cli_bench_script.h"
#include "daemon/engine/model_path.h"

namespace hearth::daemon {

void add_bench_editor_command(CLI::App & bench, cli_state & state) {
    auto * cmd = bench.add_subcommand("editor",
                                      "Open a real file, read, type: the first suggestion and the next ones, beside llama.cpp as "
                                      "llama.vim drives it");
    struct flags {
        std::string model, sides = "hearth,llama.cpp", json, llama_python, daemon_log, file_list;
        std::vector<std::string> daemon_args, settings;
        int files = 20, seed = 1;
        bool busy = false, verbose = false;
    };
    auto * f = new flags;
    cmd->add_option("-m,--model", f->model, "GGUF model file (default: the downloaded default model)");
    cmd->add_option("-n,--files", f->files, "files to open (half from Python's standard library, half Boost headers)")
        ->capture_default_str();
    cmd->add_option("--seed", f->seed, "the seed that picks the files and lines")->capture_default_str();
    cmd->add_option("--file-list", f->file_list, "open these files instead (one path per line)");
    cmd->add_option("--sides", f->sides, "what to measure: hearth, llama.cpp (comma-separated)")->capture_default_str();
    cmd->add_flag("--busy", f->busy, "run with a same-priority busy process on one core");
    cmd->add_option("--llama-python", f->llama_python, "python of the llama-cpp-python environment (default: .venv-llamacpp)");
    cmd->add_option("--daemon-arg", f->daemon_args, "extra argument for `hearth daemon` (repeatable)")->allow_extra_args(false);
    cmd->add_option("--setting", f->settings, "a daemon setting SECTION.KEY=VALUE (default: all defaults)")->allow_extra_args(false);
    cmd->add_option("--json", f->json, "also write every answer and the summary to this file");
    cmd->add_option("--daemon-log", f->daemon_log, "keep the daemon's log (at debug level) in this file");
    cmd->add_flag("-v,--verbose", f->verbose, "print every answer");
    cmd->callback([&state, f] {
        auto path = resolve_model_path(f->model);
        if (!path) { std::fprintf(stderr, "hearth bench editor: %s\n", path.message().c_str()); state.exit_code = 2; return; }
        auto self = self_executable();
        auto dir = self ? bench_script_dir("editor", "run_editor.py") : result<std::string>(self.error());
        if (!dir) { std::fprintf(stderr, "hearth bench editor: %s\n", dir.message().c_str()); state.exit_code = 2; return; }
        std::vector<std::string> argv{"python3", *dir + "/run_editor.py", "--hearth", *self, "--model", *path,
                                      "--files", std::to_string(f->files), "--seed", std::to_string(f->seed), "--sides", f->sides};
        auto add = [&argv](const char * flag, const std::string & v) { if (!v.empty()) { argv.push_back(flag); argv.push_back(v); } };
        add("--file-list", f->file_list);
        add("--json", f->json);
        add("--llama-python", f->llama_python);
        add("--daemon-log", f->daemon_log);
        for (const auto & a : f->daemon_args) argv.push_back("--daemon-arg=" + a);
        for (const auto & a : f->settings) add("--setting", a);
        if (f->busy) argv.push_back("--busy");
        if (f->verbose) argv.push_back("--verbose");
        state.exit_code = run_and_wait(argv);
    });
}

}  // namespace hearth::daemon
