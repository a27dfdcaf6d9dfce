#include "daemon/cli/cli_bench_quality.h"

#include <string>
#include <vector>

#include "daemon/cli/cli_bench_script.h"

namespace hearth::daemon {

void add_bench_quality_command(CLI::App & bench, cli_state & state) {
    auto * cmd = bench.add_subcommand("quality",
                                      "Fill-in-the-middle quality on real code through the daemon's LSP path, beside llama.cpp");
    struct flags {
        bench_script_flags common;
        std::string tasks;
        std::vector<std::string> langs, kinds;
        int limit = 80;
    };
    auto * f = new flags;
    add_bench_script_options(*cmd, f->common);
    cmd->add_option("--tasks", f->tasks, "task list, JSON lines (default: bench/quality/tasks-v1.jsonl)");
    cmd->add_option("-n,--limit", f->limit, "run the first N tasks of the list (0: all)")->capture_default_str();
    cmd->add_option("--lang", f->langs, "only these languages: python, cpp");
    cmd->add_option("--kind", f->kinds, "only these kinds: line_start, mid_line, empty_line, block, function");
    cmd->callback([&state, f] {
        std::vector<std::string> args{"--limit", std::to_string(f->limit)};
        if (!f->tasks.empty()) args.insert(args.end(), {"--tasks", f->tasks});
        for (const auto & l : f->langs) args.insert(args.end(), {"--lang", l});
        for (const auto & k : f->kinds) args.insert(args.end(), {"--kind", k});
        state.exit_code = run_bench_script("quality", "run_quality.py", f->common, std::move(args));
    });
}

}  // namespace hearth::daemon
