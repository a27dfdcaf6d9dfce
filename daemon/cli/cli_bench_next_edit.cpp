#include "daemon/cli/cli_bench_next_edit.h"

#include <string>
#include <vector>

#include "daemon/cli/cli_bench_script.h"

namespace hearth::daemon {

void add_bench_next_edit_command(CLI::App & bench, cli_state & state) {
    auto * cmd = bench.add_subcommand("next-edit",
                                      "Next-edit predictions on real edit histories through the daemon's LSP path, beside no prediction");
    struct flags {
        bench_script_flags common;
        std::string tasks, cache;
        std::vector<std::string> kinds;
        int limit = 0;
    };
    auto * f = new flags;
    f->common.sides = "hearth,none";   // llama.cpp has no next edits: the baseline is never predicting
    add_bench_script_options(*cmd, f->common);
    cmd->get_option("--sides")->description("what to measure: hearth, none (never predicts), comma-separated");
    cmd->add_option("--tasks", f->tasks, "task list, JSON lines (default: bench/next_edit/tasks-v1.jsonl)");
    cmd->add_option("-n,--limit", f->limit, "run the first N tasks of the list (0: all)")->capture_default_str();
    cmd->add_option("--kind", f->kinds, "only these kinds: edit, no_edit");
    cmd->add_option("--cache", f->cache, "where the packages' source archives are kept (default: ~/.cache/hearth/bench-next-edit)");
    cmd->callback([&state, f] {
        std::vector<std::string> args{"--limit", std::to_string(f->limit)};
        if (!f->tasks.empty()) args.insert(args.end(), {"--tasks", f->tasks});
        if (!f->cache.empty()) args.insert(args.end(), {"--cache", f->cache});
        for (const auto & k : f->kinds) args.insert(args.end(), {"--kind", k});
        state.exit_code = run_bench_script("next_edit", "run_next_edit.py", f->common, std::move(args));
    });
}

}  // namespace hearth::daemon
