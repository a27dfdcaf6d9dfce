#include "inference/layer_device.h"

#include <charconv>

#include "inference/cuda_layers.h"
#include "inference/vulkan_layers.h"

namespace hearth::inference {

result<gpu_layers> parse_gpu_layers(std::string_view text) {
    if (text == "all") return gpu_layers{gpu_layers::kind::all, 0, 0};
    if (text == "auto") return gpu_layers{gpu_layers::kind::automatic, 0, 0};
    int32_t n = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < 0)
        return fail("--gpu-layers '", std::string(text), "': expected a number of layers >= 0, 'all' or 'auto'");
    return gpu_layers{gpu_layers::kind::count, n, 0};
}

result<std::unique_ptr<layer_device>> make_layer_device(const model & m, const gpu_layers & want, int32_t n_ctx) {
    if (want.how == gpu_layers::kind::count && want.n == 0) return fail("no layers asked for the GPU");
    (void)m;
    (void)n_ctx;
    // CUDA first where the build has it; without a CUDA device, Vulkan where the build has that.
    std::string why;
#if HEARTH_HAVE_CUDA
    auto cuda = make_cuda_layers(m, want, n_ctx);
    if (cuda) return cuda;
    why = cuda.message();
#endif
#if HEARTH_HAVE_VULKAN
    auto vulkan = make_vulkan_layers(m, want, n_ctx);
    if (vulkan) return vulkan;
    why += (why.empty() ? "" : "; ") + vulkan.message();
#endif
    if (why.empty()) return fail("this build has no GPU backend (configure with HEARTH_VULKAN=ON or HEARTH_CUDA=ON); running on the CPU");
    return fail(why, "; running on the CPU");
}

}  // namespace hearth::inference
