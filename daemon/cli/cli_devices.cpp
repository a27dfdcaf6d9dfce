// hearth devices: the GPU devices each backend of this build sees, none opened, and which of them
// `--gpu-layers auto` would use (a GPU, never a CPU device). With --probe, one tab-separated line
// per device or per backend without one, for the daemon's probe (daemon/cli/gpu_probe.h).
#include <cstdio>
#include <string>

#include "daemon/cli/cli_commands.h"
#include "daemon/cli/gpu_probe.h"
#include "inference/device/device_registry.h"

namespace hearth::daemon {

void add_devices_command(CLI::App & app, cli_state & state) {
    auto * cmd = app.add_subcommand("devices", "List the GPU devices hearth can use (--gpu-layers auto takes a GPU, never a CPU device)");
    static bool probe = false;
    cmd->add_flag("--probe", probe, "one tab-separated line per device: backend, gpu|cpu|none, bytes, name or reason");
    cmd->callback([&state] {
        const auto backends = inference::device_backends();
        if (backends.empty()) {
            if (probe) std::fputs(format_probe_line("none", "none", 0, inference::k_no_gpu_backend).c_str(), stdout);
            else std::printf("%s\n", std::string(inference::k_no_gpu_backend).c_str());
            state.exit_code = 0;
            return;
        }
        for (const inference::device_backend & b : backends) {
            const std::string backend(b.name);
            auto list = b.list();
            if (!list || list->empty()) {
                const std::string why = "no " + backend + " device: " + (list ? std::string("the driver reports none") : list.message());
                if (probe) std::fputs(format_probe_line(backend, "none", 0, why).c_str(), stdout);
                else std::printf("%-7s %s\n", backend.c_str(), why.c_str());
                continue;
            }
            for (const kernels::device_summary & d : *list) {
                if (probe) {
                    std::fputs(format_probe_line(backend, d.cpu ? "cpu" : "gpu", d.memory_bytes, d.name).c_str(), stdout);
                } else {
                    std::printf("%-7s %-40s %8.1f GiB  %s\n", backend.c_str(), d.name.c_str(),
                                static_cast<double>(d.memory_bytes) / (1024.0 * 1024 * 1024),
                                d.cpu ? "CPU device: auto skips it (--gpu-layers N or all runs on it)" : "GPU");
                }
            }
        }
        std::fflush(stdout);
        state.exit_code = 0;
    });
}

}  // namespace hearth::daemon
