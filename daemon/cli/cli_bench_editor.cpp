#include "daemon/cli/cli_bench_editor.h"

#include <string>
#include <vector>

#include "daemon/cli/cli_bench_script.h"

namespace hearth::daemon {

void add_bench_editor_command(CLI::App & bench, cli_state & state) {
    auto * cmd = bench.add_subcommand("editor",
                                      "Open a real file, read, type: the first suggestion and the next ones, beside llama.cpp as "
                                      "llama.vim drives it");
    struct flags {
        bench_script_flags common;
        std::string file_list;
        int files = 20, seed = 1;
    };
    auto * f = new flags;
    add_bench_script_options(*cmd, f->common);
    cmd->add_option("-n,--files", f->files, "files to open (half from Python's standard library, half Boost headers)")
        ->capture_default_str();
    cmd->add_option("--seed", f->seed, "the seed that picks the files and lines")->capture_default_str();
    cmd->add_option("--file-list", f->file_list, "open these files instead (PATH [LINE [SHA256]] per line)");
    cmd->callback([&state, f] {
        std::vector<std::string> args{"--files", std::to_string(f->files), "--seed", std::to_string(f->seed)};
        if (!f->file_list.empty()) args.insert(args.end(), {"--file-list", f->file_list});
        state.exit_code = run_bench_script("editor", "run_editor.py", f->common, std::move(args));
    });
}

}  // namespace hearth::daemon
