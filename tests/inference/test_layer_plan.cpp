// The offload plan (inference/device/layer_plan.h) against a backend that is only a description: which
// layers N, all and auto place, the device bytes of their weights, KV rows and compute buffers,
// `auto` under a memory that holds fewer layers, and the refusals. No device is opened.
#include <catch2/catch.hpp>

#include "inference/cache/kv_cache.h"
#include "inference/device/layer_plan.h"
#include "kernels/cuda/formats.h"
#include "tests/default_model.h"
#include "inference/load/loaded_model.h"
#include "tests/inference/golden_util.h"
#include "tests/skip.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;
using kernels::tensor_type;

namespace {

bool any_weight(tensor_type) { return true; }
bool no_f32(tensor_type t) { return t != tensor_type::f32; }

const offload_backend k_big{"Test", any_weight, 1ull << 30, "test: a 1 GiB device"};

test_model stories() { return load_test_model(std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf"); }

// Layer L's weights and norms counted from the model itself (f32: 4 bytes an element).
uint64_t weights_of(const hparams & hp, const layer & L) {
    uint64_t b = 2ull * hp.n_embd * 4;
    for (const weight * w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down})
        b += static_cast<uint64_t>(w->n_rows) * static_cast<uint64_t>(w->n_cols) * 4;
    return b;
}

}  // namespace

TEST_CASE("layer plan: all, N and a count past the model place the last layers with their bytes", "[inference][plan]") {
    auto tm = stories();
    const hparams & hp = tm.mdl.hp();
    const offload_room room{256, 2, 256, tensor_type::f16};
    auto all = plan_offload(tm.mdl, *parse_gpu_layers("all"), room, k_big);
    REQUIRE(all.has_value());
    CHECK(all->n_layers == 5);
    CHECK(all->first_layer() == 0);
    CHECK(all->n_runnable == 5);
    CHECK(all->backend == "Test");
    CHECK(all->device == "test: a 1 GiB device");
    CHECK(all->asked == "all");
    CHECK(all->budget_bytes == 0);   // only `auto` plans within a budget
    uint64_t weights = 0;
    for (const auto & L : tm.mdl.layers()) weights += weights_of(hp, L);
    CHECK(all->weight_bytes == weights);
    // K and V, 32 f16 each per position, for 2 slots of 256 positions, in each of the 5 layers.
    CHECK(all->kv_bytes == 5ull * 2 * 256 * (2 * 32 * 2));
    CHECK(all->kv_bytes == 5 * kv_bytes_per_token(tensor_type::f16, 1, hp.n_embd_kv()) * 256 * 2);
    CHECK(all->compute_bytes == device_compute_bytes(hp, room));
    // Every layer, so the output block too: its norm, its matrix and 16 rows of logits.
    CHECK(all->output);
    const weight & out = tm.mdl.output();
    CHECK(all->output_bytes == static_cast<uint64_t>(out.n_rows) * out.row_bytes + hp.n_embd * 4ull + 16ull * hp.n_vocab * 4);
    CHECK(all->total_bytes() == all->weight_bytes + all->output_bytes + all->kv_bytes + all->compute_bytes);
    CHECK(all->fits());
    CHECK(all->why_fewer.empty());

    auto two = plan_offload(tm.mdl, *parse_gpu_layers("2"), room, k_big);
    REQUIRE(two.has_value());
    CHECK(two->n_layers == 2);
    CHECK(two->first_layer() == 3);
    CHECK(two->weight_bytes == weights_of(hp, tm.mdl.layers()[3]) + weights_of(hp, tm.mdl.layers()[4]));
    CHECK(two->kv_bytes == all->kv_bytes / 5 * 2);
    CHECK(describe(*two).find("layers 3-4 of 5 on test: a 1 GiB device (--gpu-layers 2)") == 0);
    CHECK_FALSE(two->output);   // the output follows the last layer on the CPU
    CHECK(two->output_bytes == 0);
    CHECK(describe(*all).find("layers 0-4 of 5 and the output on test") == 0);

    auto nine = plan_offload(tm.mdl, *parse_gpu_layers("9"), room, k_big);
    REQUIRE(nine.has_value());
    CHECK(nine->n_layers == 5);

    // A device smaller than the plan still gets N and all (uploading says whether they fit).
    const offload_backend tiny{"Test", any_weight, 4096, "test: 4 KiB"};
    auto over = plan_offload(tm.mdl, *parse_gpu_layers("all"), room, tiny);
    REQUIRE(over.has_value());
    CHECK_FALSE(over->fits());
}

TEST_CASE("layer plan: the compute buffers grow with the batch and the context", "[inference][plan]") {
    auto tm = stories();
    const hparams & hp = tm.mdl.hp();
    const uint64_t base = device_compute_bytes(hp, {256, 1, 256, tensor_type::f16});
    // The attention scores: a float per head and position for every token of the batch.
    CHECK(device_compute_bytes(hp, {512, 1, 256, tensor_type::f16}) - base == 256ull * hp.n_head * 256 * 4);
    CHECK(device_compute_bytes(hp, {256, 1, 512, tensor_type::f16}) == 2 * base);
    // Slots and the cache type change the KV rows, not the buffers.
    CHECK(device_compute_bytes(hp, {256, 8, 256, tensor_type::f32}) == base);
    CHECK(layer_kv_bytes(hp, {256, 8, 256, tensor_type::f32}) == 2 * layer_kv_bytes(hp, {256, 8, 256, tensor_type::f16}));
    CHECK(layer_kv_bytes(hp, {256, 8, 256, tensor_type::f16}) == 4 * layer_kv_bytes(hp, {256, 2, 256, tensor_type::f16}));
}

TEST_CASE("layer plan: auto places what fits in the capped memory and says why not more", "[inference][plan]") {
    auto tm = stories();
    const hparams & hp = tm.mdl.hp();
    const offload_room room{512, 1, 256, tensor_type::f16};
    auto whole = plan_offload(tm.mdl, *parse_gpu_layers("auto"), room, k_big);
    REQUIRE(whole.has_value());
    CHECK(whole->n_layers == 5);
    CHECK(whole->why_fewer.empty());
    CHECK(whole->budget_bytes == static_cast<uint64_t>(static_cast<double>(1ull << 30) * 0.8));

    // The compute buffers and two and a half layers, within the margin: two layers.
    const uint64_t one = layer_weight_bytes(hp, tm.mdl.layers().back(), hp.n_layer - 1) + layer_kv_bytes(hp, room);
    gpu_layers want = *parse_gpu_layers("auto");
    want.device_memory_cap = static_cast<uint64_t>(static_cast<double>(device_compute_bytes(hp, room) + 5 * one / 2) / 0.8);
    auto two = plan_offload(tm.mdl, want, room, k_big);
    REQUIRE(two.has_value());
    CHECK(two->n_layers == 2);
    CHECK(two->first_layer() == 3);
    CHECK(two->total_bytes() <= two->budget_bytes);
    CHECK(two->why_fewer.find("2 of 5 layers fit in ") == 0);
    CHECK(two->why_fewer.find("capped") != std::string::npos);
    CHECK(describe(*two).find("; fewer layers: 2 of 5 layers fit") != std::string::npos);

    // More slots, less room for layers.
    auto slots = plan_offload(tm.mdl, want, offload_room{512, 4, 256, tensor_type::f16}, k_big);
    REQUIRE(slots.has_value());
    CHECK(slots->n_layers < 2);

    // Not even the compute buffers and one layer: refused, with the sizes.
    want.device_memory_cap = 1024;
    auto none = plan_offload(tm.mdl, want, room, k_big);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.message().find("holds none of this model's layers") != std::string::npos);
    CHECK(none.message().find("compute buffers") != std::string::npos);
}

TEST_CASE("layer plan: a weight type the backend does not decode is refused, naming the layer", "[inference][plan]") {
    auto tm = stories();
    const offload_backend picky{"Picky", no_f32, 1ull << 30, "picky device"};
    for (const char * asked : {"2", "all", "auto"}) {
        INFO(asked);
        auto p = plan_offload(tm.mdl, *parse_gpu_layers(asked), {256}, picky);
        REQUIRE_FALSE(p.has_value());
        CHECK(p.message() == "the Picky backend cannot run layer 4 of this model (a f32 weight)");
    }
}

TEST_CASE("gpu layers: to_string gives back what parse_gpu_layers read", "[inference][plan]") {
    for (const char * text : {"0", "3", "all", "auto"}) CHECK(to_string(*parse_gpu_layers(text)) == text);
}

TEST_CASE("layer plan: the output block goes with every layer where the backend takes its matrix and auto's budget "
          "holds it", "[inference][plan]") {
    auto tm = stories();
    const hparams & hp = tm.mdl.hp();
    const offload_room room{256, 2, 256, tensor_type::f16};
    auto all = plan_offload(tm.mdl, *parse_gpu_layers("all"), room, k_big);
    REQUIRE(all.has_value());
    REQUIRE(all->output);
    // auto within a budget that holds every layer but not the output: the layers go, the output stays.
    uint64_t layers = device_compute_bytes(hp, room);
    for (int32_t il = 0; il < hp.n_layer; ++il)
        layers += layer_weight_bytes(hp, tm.mdl.layers()[static_cast<size_t>(il)], il) + layer_kv_bytes(hp, room);
    const uint64_t cap = static_cast<uint64_t>(static_cast<double>(layers + all->output_bytes / 2) / k_device_memory_margin);
    auto tight = plan_offload(tm.mdl, {gpu_layers::kind::automatic, 0, cap}, room, k_big);
    REQUIRE(tight.has_value());
    CHECK(tight->n_layers == hp.n_layer);
    CHECK_FALSE(tight->output);
    const uint64_t roomy = static_cast<uint64_t>(static_cast<double>(layers + all->output_bytes * 2) / k_device_memory_margin);
    auto fits = plan_offload(tm.mdl, {gpu_layers::kind::automatic, 0, roomy}, room, k_big);
    REQUIRE(fits.has_value());
    CHECK(fits->output);
}

TEST_CASE("gpu layers: the default is auto, for --gpu-layers, config and load_options alike", "[inference][plan]") {
    const auto want = parse_gpu_layers(k_default_gpu_layers);
    REQUIRE(want.has_value());
    CHECK(want->how == gpu_layers::kind::automatic);
    CHECK_FALSE(want->cpu_device_ok);
    CHECK(load_options{}.gpu_layers == "auto");
}

TEST_CASE("layer plan: auto places nothing on a CPU device, saying so; N and all still do", "[inference][plan]") {
    auto tm = stories();
    const offload_backend cpu{"Test", any_weight, 1ull << 30, "test: llvmpipe", true};
    auto none = plan_offload(tm.mdl, *parse_gpu_layers("auto"), {256}, cpu);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.message().find("test: llvmpipe is a CPU device") == 0);
    for (const char * asked : {"2", "all"}) {
        INFO(asked);
        auto p = plan_offload(tm.mdl, *parse_gpu_layers(asked), {256}, cpu);
        REQUIRE(p.has_value());
        CHECK(p->n_layers > 0);
        CHECK(p->cpu_device);
    }
    // Told it may (the tests on lavapipe), auto plans on it as on a GPU.
    gpu_layers may = *parse_gpu_layers("auto");
    may.cpu_device_ok = true;
    auto p = plan_offload(tm.mdl, may, {256}, cpu);
    REQUIRE(p.has_value());
    CHECK(p->n_layers == 5);
    auto gpu = plan_offload(tm.mdl, *parse_gpu_layers("auto"), {256}, k_big);
    REQUIRE(gpu.has_value());
    CHECK_FALSE(gpu->cpu_device);
}

TEST_CASE("layer plan: on a CUDA device of ample memory, auto places every layer and the output of each pinned model",
          "[inference][plan][pinned-model]") {
    const uint64_t gib = 1ull << 30;
    // What the CUDA backend declares (kernels/cuda/formats.h): no driver, no device, only the description.
    const offload_backend cuda{"CUDA", kernels::cuda::declares_weight, 80 * gib, "cuda: a described 80 GiB device"};
    int planned = 0;
    for (const char * name : {"qwen2.5-coder-0.5b-instruct-q4_k_m", "qwen2.5-coder-1.5b-instruct-q4_k_m"}) {
        INFO(name);
        const std::string path = hearth::test::pinned_model_file(name);
        if (path.empty()) continue;
        auto tm = load_test_model(path);
        const hparams & hp = tm.mdl.hp();
        // The daemon's room: 4 slots of 4096 positions, a 256-token batch, the default cache.
        const offload_room room{4096, 4, 256, *parse_cache_types(k_default_cache_type)};
        auto p = plan_offload(tm.mdl, *parse_gpu_layers("auto"), room, cuda);
        INFO((p ? describe(*p) : p.message()));
        REQUIRE(p.has_value());
        CHECK(p->n_layers == hp.n_layer);
        CHECK(p->output);
        CHECK(p->why_fewer.empty());
        CHECK(kernels::cuda::declares_cache(room.cache_types.k));
        CHECK(kernels::cuda::declares_cache(room.cache_types.v));
        ++planned;
    }
    if (planned == 0)
        HEARTH_SKIP("neither pinned model is in the model cache (scripts/fetch-model; the 1.5B with --model "
                    "qwen2.5-coder-1.5b-instruct-q4_k_m)");
}
