#include "inference/layer_device.h"

#include <utility>

#include "inference/cuda_layers.h"
#include "inference/device_layers.h"
#include "inference/vulkan_layers.h"

namespace hearth::inference {
namespace {

using opener = result<offload_target> (*)();

// The backends of this build in the order they are tried: CUDA first, then Vulkan.
std::vector<std::pair<const char *, opener>> backends() {
    std::vector<std::pair<const char *, opener>> out;
#if HEARTH_HAVE_CUDA
    out.emplace_back("CUDA", open_cuda_target);
#endif
#if HEARTH_HAVE_VULKAN
    out.emplace_back("Vulkan", open_vulkan_target);
#endif
    return out;
}

constexpr const char * k_no_backend =
    "this build has no GPU backend (configure with HEARTH_VULKAN=ON or HEARTH_CUDA=ON)";

}  // namespace

std::vector<backend_plan> plan_layer_devices(const model & m, const gpu_layers & want, const offload_room & room) {
    std::vector<backend_plan> out;
    for (const auto & [name, open] : backends()) {
        backend_plan bp{name, std::nullopt, {}};
        auto t = open();
        auto p = t ? plan_offload(m, want, room, t->backend) : result<offload_plan>(t.error());
        if (p) bp.plan = std::move(*p);
        else bp.why_not = p.message();
        out.push_back(std::move(bp));
    }
    return out;
}

result<offloaded_layers> make_offloaded_layers(offload_target target, const model & m, const gpu_layers & want,
                                               const offload_room & room) {
    auto plan = plan_offload(m, want, room, target.backend);
    if (!plan) return plan.error();
    auto dev = make_device_layers(m, plan->n_layers, std::move(target.ops));
    if (!dev) return dev.error();
    return offloaded_layers{std::move(*dev), std::move(*plan)};
}

result<offloaded_layers> make_layer_device(const model & m, const gpu_layers & want, const offload_room & room) {
    if (want.how == gpu_layers::kind::count && want.n == 0) return fail("no layers asked for the GPU");
    // The first backend that opens, places the layers and takes the weights; else every reason.
    std::string why;
    for (const auto & [name, open] : backends()) {
        auto t = open();
        auto d = t ? make_offloaded_layers(std::move(*t), m, want, room) : result<offloaded_layers>(t.error());
        if (d) return d;
        why += (why.empty() ? "" : "; ") + d.message();
    }
    return fail(why.empty() ? k_no_backend : why, "; running on the CPU");
}

}  // namespace hearth::inference
