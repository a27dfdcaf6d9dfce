#include "inference/device/layer_device.h"

#include <utility>

#include "inference/device/device_registry.h"

namespace hearth::inference {
namespace {

// The backend's device opened, with what placement needs to know of it. `auto` asks for a GPU:
// a CPU device would run the layers slower than the CPU's own kernels.
result<offload_target> open_target(const device_backend & b, const gpu_layers & want) {
    auto ops = b.open(want.how != gpu_layers::kind::automatic || want.cpu_device_ok);
    if (!ops) return ops.error();   // "no Vulkan device: ...", with the backend's reason
    std::shared_ptr<kernels::device_ops> shared = std::move(*ops);
    offload_backend be{b.name, [d = shared.get()](kernels::tensor_type t) { return d->supports_weight(t); },
                       shared->memory_bytes(), shared->name(), shared->is_cpu()};
    return offload_target{std::move(shared), std::move(be)};
}

}  // namespace

std::vector<backend_plan> plan_layer_devices(const model & m, const gpu_layers & want, const offload_room & room) {
    std::vector<backend_plan> out;
    for (const device_backend & b : device_backends()) {
        backend_plan bp{std::string(b.name), std::nullopt, {}};
        auto t = open_target(b, want);
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
    auto dev = make_device_layers(m, plan->n_layers, plan->output, std::move(target.ops));
    if (!dev) return dev.error();
    return offloaded_layers{std::move(*dev), std::move(*plan)};
}

result<offloaded_layers> make_layer_device(const model & m, const gpu_layers & want, const offload_room & room) {
    if (want.how == gpu_layers::kind::count && want.n == 0) return fail("no layers asked for the GPU");
    // The first backend that opens, places the layers and takes the weights; else every reason.
    std::string why;
    for (const device_backend & b : device_backends()) {
        auto t = open_target(b, want);
        auto d = t ? make_offloaded_layers(std::move(*t), m, want, room) : result<offloaded_layers>(t.error());
        if (d) return d;
        why += (why.empty() ? "" : "; ") + d.message();
    }
    return fail(why.empty() ? std::string(k_no_gpu_backend) : why, "; running on the CPU");
}

result<offloaded_layers> make_layer_device_on(std::string_view backend, const model & m, const gpu_layers & want,
                                              const offload_room & room) {
    for (const device_backend & b : device_backends()) {
        if (b.name != backend) continue;
        auto t = open_target(b, want);
        if (!t) return t.error();
        return make_offloaded_layers(std::move(*t), m, want, room);
    }
    return fail("this build has no ", backend, " backend");
}

}  // namespace hearth::inference
