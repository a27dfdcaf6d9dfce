#include "daemon/cli/cli_bench_quality.h"

#include <cstdio>
#include <string>
#include <vector>

#include "daemon/cli/cli_bench_script.h"
#include "daemon/engine/model_path.h"

namespace hearth::daemon {

void add_bench_quality_command(CLI::App & bench, cli_state & state) {
    auto * cmd = bench.add_subcommand("quality",
                                      "Fill-in-the-middle quality on real code through the daemon's LSP path, beside llama.cpp");
    struct flags {
        std::string model, tasks, sides = "hearth,llama.cpp", json, llama_python, daemon_log;
        std::vector<std::string> langs, kinds, daemon_args, settings;
        int limit = 80, threads = 0;
        bool busy = false, verbose = false;
    };
    auto * f = new flags;
    cmd->add_option("-m,--model", f->model, "GGUF model file (default: the downloaded default model)");
    cmd->add_option("--tasks", f->tasks, "task list, JSON lines (default: bench/quality/tasks-v1.jsonl)");
    cmd->add_option("-n,--limit", f->limit, "run the first N tasks of the list (0: all)")->capture_default_str();
    cmd->add_option("--lang", f->langs, "only these languages: python, cpp");
    cmd->add_option("--kind", f->kinds, "only these kinds: line_start, mid_line, empty_line, block, function");
    cmd->add_option("--sides", f->sides, "what to measure: hearth, llama.cpp (comma-separated)")->capture_default_str();
    cmd->add_flag("--busy", f->busy, "run with a same-priority busy process on one core");
    cmd->add_option("-t,--threads", f->threads, "llama.cpp's threads (0: every CPU it may use)")->capture_default_str();
    cmd->add_option("--llama-python", f->llama_python, "python of the llama-cpp-python environment (default: .venv-llamacpp)");
    cmd->add_option("--daemon-arg", f->daemon_args, "extra argument for `hearth daemon` (repeatable)")->allow_extra_args(false);
    cmd->add_option("--setting", f->settings, "a daemon setting SECTION.KEY=VALUE, e.g. completion.time-budget-ms=60000 (default: all defaults)")
        ->allow_extra_args(false);
    cmd->add_option("--json", f->json, "also write every answer and the summary to this file");
    cmd->add_option("--daemon-log", f->daemon_log, "keep the daemon's log (at debug level) in this file");
    cmd->add_flag("-v,--verbose", f->verbose, "print every answer next to the expected one");
    cmd->callback([&state, f] {
        auto path = resolve_model_path(f->model);
        if (!path) { std::fprintf(stderr, "hearth bench quality: %s\n", path.message().c_str()); state.exit_code = 2; return; }
        auto self = self_executable();
        auto dir = self ? bench_script_dir("quality", "run_quality.py") : result<std::string>(self.error());
        if (!dir) { std::fprintf(stderr, "hearth bench quality: %s\n", dir.message().c_str()); state.exit_code = 2; return; }
        std::vector<std::string> argv{"python3", *dir + "/run_quality.py", "--hearth", *self, "--model", *path,
                                      "--limit", std::to_string(f->limit), "--sides", f->sides, "--threads", std::to_string(f->threads)};
        auto add = [&argv](const char * flag, const std::string & v) { if (!v.empty()) { argv.push_back(flag); argv.push_back(v); } };
        add("--tasks", f->tasks);
        add("--json", f->json);
        add("--llama-python", f->llama_python);
        add("--daemon-log", f->daemon_log);
        for (const auto & l : f->langs) add("--lang", l);
        for (const auto & k : f->kinds) add("--kind", k);
        for (const auto & a : f->daemon_args) argv.push_back("--daemon-arg=" + a);
        for (const auto & a : f->settings) add("--setting", a);
        if (f->busy) argv.push_back("--busy");
        if (f->verbose) argv.push_back("--verbose");
        state.exit_code = run_and_wait(argv);
    });
}

}  // namespace hearth::daemon
