// The GPU probe of `--gpu-layers auto` in the hearth executable: which GPU devices this machine has, asked of a child
// process (this executable run as `hearth devices --probe`) before any backend is loaded here.
// Loading a Vulkan driver only to find lavapipe, a CPU device auto never uses, costs the daemon
// about 50 MiB resident and 170 MiB of address space it never gives back (the driver's LLVM
// cannot be unloaded), and a broken driver that crashes would crash the daemon; in the child,
// both cost nothing. Where a GPU is found, the backend is then opened in this process as usual.
// Thread-safety: any thread (each call spawns its own child).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hearth::daemon {

// One line of `hearth devices --probe`: backend, "gpu" / "cpu" / "none", bytes, name or reason,
// separated by tabs.
struct probe_line {
    std::string backend;
    std::string kind;
    std::string name;   // the device's name, or why the backend has none
};
std::optional<probe_line> parse_probe_line(std::string_view line);
// The line `hearth devices --probe` writes for one device or backend (kind "gpu", "cpu", "none"),
// with its newline: what parse_probe_line reads.
std::string format_probe_line(std::string_view backend, std::string_view kind, uint64_t bytes, std::string_view name);

// Why no GPU can take layers (every device a CPU device, no device, the probe failed), or
// nullopt where some backend has a GPU. Waits at most k_gpu_probe_timeout_ms for the child.
std::optional<std::string> probe_no_gpu();
// The reason from the probe's output alone (exposed for the tests).
std::optional<std::string> no_gpu_reason(std::string_view probe_output);

inline constexpr int k_gpu_probe_timeout_ms = 20000;

}  // namespace hearth::daemon
