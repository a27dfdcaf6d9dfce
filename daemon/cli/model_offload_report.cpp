#include "daemon/cli/model_offload_report.h"

#include <cstdio>
#include <utility>

#include "daemon/models/byte_units.h"
#include "inference/device/device_registry.h"
#include "kernels/tensor_type.h"

namespace hearth::daemon {
namespace {

using inference::offload_plan;

std::string layer_range(int32_t first, int32_t last) {
    return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

std::string cache_name(const inference::offload_room & r) { return inference::kv_types_name(r.cache_types); }

void print_plan(const offload_plan & p, bool chosen) {
    auto row = [](const char * label, const std::string & value) { std::printf("    %-18s %s\n", label, value.c_str()); };
    std::printf("  %s: %s%s\n", p.backend.c_str(), p.device.c_str(), chosen ? "  (chosen)" : "");
    row("device memory", human_bytes(p.device_bytes, 2) +
                             (p.budget_bytes ? " (auto plans within " + human_bytes(p.budget_bytes, 2) + ")" : ""));
    std::string layers = std::to_string(p.n_layers) + " of " + std::to_string(p.n_layer) + " on the device: " +
                         layer_range(p.first_layer(), p.n_layer - 1);
    if (p.first_layer() > 0) layers += "; on the CPU: " + layer_range(0, p.first_layer() - 1);
    row("layers", layers);
    row("weights", human_bytes(p.weight_bytes, 2));
    row("output", p.output ? human_bytes(p.output_bytes, 2) + " (its norm, matrix and logits, on the device)"
                           : std::string("on the CPU"));
    row("KV cache", human_bytes(p.kv_bytes, 2) + " (" + cache_name(p.room) + ", " + std::to_string(p.room.n_slots) +
                        " slots of " + std::to_string(p.room.n_ctx) + " positions)");
    row("compute buffers", human_bytes(p.compute_bytes, 2) + " (batch " + std::to_string(p.room.n_batch) + ")");
    row("total", human_bytes(p.total_bytes(), 2) + (p.fits() ? "" : ", more than the device has: loading may fail"));
    if (p.asked == "auto")
        row("auto chose", std::to_string(p.n_layers) + " layers" + (p.why_fewer.empty() ? ": every layer fits" : ": " + p.why_fewer));
    else if (!p.why_fewer.empty())
        row("fewer layers", p.why_fewer);
}

boost::json::object plan_json(const offload_plan & p) {
    return {{"device", p.device},
            {"cpu_device", p.cpu_device},
            {"device_bytes", p.device_bytes},
            {"budget_bytes", p.budget_bytes},
            {"layers", p.n_layers},
            {"first_layer", p.first_layer()},
            {"runnable_layers", p.n_runnable},
            {"weights_bytes", p.weight_bytes},
            {"output_on_device", p.output},
            {"output_bytes", p.output_bytes},
            {"kv_bytes", p.kv_bytes},
            {"compute_bytes", p.compute_bytes},
            {"total_bytes", p.total_bytes()},
            {"fits", p.fits()},
            {"why_fewer", p.why_fewer}};
}

}  // namespace

offload_report make_offload_report(const inference::model & m, const inference::gpu_layers & want,
                                   const inference::offload_room & room) {
    offload_report r{want, room, m.hp().n_layer, {}, -1, {}};
    const bool none = want.how == inference::gpu_layers::kind::count && want.n == 0;
    if (none) {
        r.cpu_reason = "--gpu-layers 0";
        return r;
    }
    r.backends = inference::plan_layer_devices(m, want, room);
    std::string why;
    for (size_t i = 0; i < r.backends.size(); ++i) {
        if (r.backends[i].plan && r.chosen < 0) r.chosen = static_cast<int>(i);
        if (!r.backends[i].plan) why += (why.empty() ? "" : "; ") + r.backends[i].why_not;
    }
    if (r.backends.empty()) r.cpu_reason = std::string(inference::k_no_gpu_backend);
    else if (r.chosen < 0) r.cpu_reason = why;
    return r;
}

void print_offload_report(const offload_report & r) {
    std::printf("\nGPU offload (--gpu-layers %s; room for %d slots of %d positions, %s KV cache, batch %d):\n",
                inference::to_string(r.want).c_str(), r.room.n_slots, r.room.n_ctx, cache_name(r.room).c_str(), r.room.n_batch);
    for (size_t i = 0; i < r.backends.size(); ++i) {
        const auto & b = r.backends[i];
        if (b.plan) print_plan(*b.plan, static_cast<int>(i) == r.chosen);
        else std::printf("  %s: not available: %s\n", b.backend.c_str(), b.why_not.c_str());
    }
    if (r.chosen < 0) std::printf("  every layer (%d) runs on the CPU: %s\n", r.n_layer, r.cpu_reason.c_str());
}

boost::json::object offload_report_json(const offload_report & r) {
    boost::json::array backends;
    for (size_t i = 0; i < r.backends.size(); ++i) {
        const auto & b = r.backends[i];
        boost::json::object o{{"backend", b.backend}, {"chosen", static_cast<int>(i) == r.chosen}};
        if (b.plan) o["plan"] = plan_json(*b.plan);
        else o["why_not"] = b.why_not;
        backends.push_back(std::move(o));
    }
    return {{"gpu_layers", inference::to_string(r.want)},
            {"context", r.room.n_ctx},
            {"slots", r.room.n_slots},
            {"batch", r.room.n_batch},
            {"kv_type", cache_name(r.room)},
            {"backends", std::move(backends)},
            {"chosen", r.chosen >= 0 ? boost::json::value(r.backends[static_cast<size_t>(r.chosen)].backend)
                                     : boost::json::value(nullptr)},
            {"cpu_reason", r.cpu_reason}};
}

}  // namespace hearth::daemon
