// The last layers on the Vulkan device (layer_device.h) against the CPU: the stories260K models'
// greedy continuations of the golden prompts with an f16 cache, with some and all layers offloaded
// (tests/inference/offload_util.h); the session cache over q8_0 / q4_0 caches on the device (the
// default model: its heads are whole blocks); the CPU fallback for other caches; `auto` placement.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "inference/device/layer_plan.h"
#include "tests/inference/offload_util.h"
#include "tests/default_model.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;

namespace {

std::unique_ptr<layer_device> device_for(const model & m, gpu_layers want) {
    return device_or_skip("Vulkan", m, want);
}

}  // namespace

TEST_CASE("vulkan offload: stories260K greedy tokens identical to the CPU's with 2 and all layers offloaded",
          "[inference][vulkan]") {
    const char * model_file = GENERATE("stories260K-F32.gguf", "stories260K-F16.gguf", "stories260K-Q8_0.gguf",
                                       "stories260K-Q4_0.gguf");
    const std::string layers = GENERATE("2", "all");
    check_golden_offload("Vulkan", model_file, layers);
}

TEST_CASE("vulkan offload: every architecture's small models with 1, half and all layers on the device give the "
          "CPU's greedy tokens", "[inference][vulkan][arch]") {
    check_arch_offload("Vulkan");
}

TEST_CASE("vulkan offload: gemma-3-270m with every layer on the device gives the CPU's greedy continuations",
          "[inference][vulkan][pinned-model]") {
    check_gemma_offload("Vulkan");
}

TEST_CASE("vulkan offload: the session cache's prefix reuse, slot files and chunk reuse give the CPU's tokens, "
          "the offloaded rows on the device", "[inference][vulkan]") {
    const std::string layers = GENERATE("2", "all");
    check_session_cache_offload("Vulkan", layers);
}

TEST_CASE("vulkan offload: q8_0 and q4_0 caches, K and V apart, live on the device and continue the golden "
          "prompts as the CPU does", "[inference][vulkan][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(path);
    using kernels::tensor_type;
    // Both quantized types in K and in V (lavapipe is slow: two pairs, three prompts' first 100 tokens).
    const kv_types types = GENERATE(kv_types(tensor_type::q8_0, tensor_type::q4_0), kv_types(tensor_type::q4_0, tensor_type::q8_0));
    check_quantized_cache_offload("Vulkan", path, types);
}

TEST_CASE("vulkan offload: a smoothed q8_0 K on the device (layer 8's K scales there) continues the golden prompts as "
          "the CPU's smoothed K does", "[inference][vulkan][default-model][k_smoothing]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(path);
    check_smoothed_cache_offload("Vulkan", path);
}

TEST_CASE("vulkan offload: weights imported from the mapped file (zero-copy) give the logits of copied ones, bit "
          "for bit", "[inference][vulkan][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(path);
    auto tm = load_test_model(path);
    kernels::thread_pool pool(2);
    const auto golden = read_json_file(std::string(HEARTH_SOURCE_DIR) +
                                       "/tests/golden/qwen2.5-coder-0.5b-instruct-q4_k_m/completions.json");
    auto prompt = json_ids(golden.at("results").as_array()[0].at("prompt_tokens"));
    prompt.resize(std::min<size_t>(prompt.size(), 24));
    // The last two layers and every layer, once imported and once copied (HEARTH_VULKAN_IMPORT_HOST=0).
    for (const char * layers : {"2", "all"}) {
        INFO("--gpu-layers " << layers);
        std::vector<float> logits[2];
        uint64_t imported[2] = {0, 0};
        for (int copy = 0; copy < 2; ++copy) {
            if (copy) ::setenv("HEARTH_VULKAN_IMPORT_HOST", "0", 1);
            auto dev = device_for(tm.mdl, *parse_gpu_layers(layers));
            ::unsetenv("HEARTH_VULKAN_IMPORT_HOST");
            if (!dev) return;
            imported[copy] = dev->imported_bytes();
            engine gpu(tm.mdl, pool);
            gpu.set_layer_device(std::move(dev));
            auto cache = gpu.make_cache(kernels::tensor_type::f16, 64);
            REQUIRE(gpu.eval(cache, prompt, logits[copy]).has_value());
        }
        std::printf("Vulkan offload, default model, --gpu-layers %s: %.1f MiB of weights imported, the logits of "
                    "copied weights %s\n", layers, static_cast<double>(imported[0]) / (1 << 20),
                    logits[0] == logits[1] ? "to the bit" : "DIFFER");
        // lavapipe shares the host's memory and offers VK_EXT_external_memory_host: every layer's matrices go in place.
        CHECK(imported[0] > 0);
        CHECK(imported[1] == 0);
        CHECK(logits[0] == logits[1]);
    }
}

TEST_CASE("vulkan offload: a cache type the device does not take runs on the CPU, bit for bit",
          "[inference][vulkan]") {
    check_untaken_cache_on_cpu("Vulkan");
}

TEST_CASE("vulkan offload: auto places as many layers as a capped device memory holds", "[inference][vulkan]") {
    auto tm = load_test_model(std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf");
    const int32_t n_layer = tm.mdl.hp().n_layer;
    // lavapipe is a CPU device, which auto chooses only when told it may.
    auto all = device_for(tm.mdl, {gpu_layers::kind::automatic, 0, 0, true});
    if (!all) return;
    CHECK(all->first_layer() == 0);   // the whole model fits
    // The compute buffers and two and a half layers with a 512-position f16 cache, within the margin.
    const offload_room room{.n_ctx = 512};
    const uint64_t one = layer_weight_bytes(tm.mdl.hp(), tm.mdl.layers().back(), tm.mdl.hp().n_layer - 1) + layer_kv_bytes(tm.mdl.hp(), room);
    const uint64_t cap =
        static_cast<uint64_t>(static_cast<double>(device_compute_bytes(tm.mdl.hp(), room) + 5 * one / 2) / 0.8);
    auto two = make_layer_device_on("Vulkan", tm.mdl, {gpu_layers::kind::automatic, 0, cap, true}, room);
    REQUIRE(two.has_value());
    CHECK(two->device->first_layer() == n_layer - 2);
    auto none = make_layer_device_on("Vulkan", tm.mdl, {gpu_layers::kind::automatic, 0, 1024, true}, room);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.message().find("holds none") != std::string::npos);
}

TEST_CASE("vulkan offload: auto, the default, never chooses a CPU device; all still runs on it", "[inference][vulkan]") {
    auto tm = load_test_model(std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf");
    const offload_room room{.n_ctx = 256};
    auto all = make_layer_device_on("Vulkan", tm.mdl, {gpu_layers::kind::all, 0, 0}, room);
    if (!all) HEARTH_SKIP("no Vulkan device: " << all.message());
    CHECK(all->device->first_layer() == 0);   // all and N place layers on a CPU device as asked
    const bool cpu_device = all->plan.cpu_device;
    const std::string name = all->plan.device;
    all->device.reset();
    const auto want = parse_gpu_layers(k_default_gpu_layers);
    REQUIRE(want.has_value());
    auto chosen = make_layer_device(tm.mdl, *want, room);
    INFO(name << ": " << (chosen ? chosen->device->describe() : chosen.message()));
    if (!cpu_device) {
        WARN(name << " is a GPU: auto may place layers on it");
        return;
    }
    REQUIRE_FALSE(chosen.has_value());
    // "no Vulkan GPU: llvmpipe (LLVM 15.0.6, 256 bits) is a CPU device; running on the CPU"
    CHECK(chosen.message().find(name.substr(std::string("vulkan: ").size()) + " is a CPU device") != std::string::npos);
    CHECK(chosen.message().find("running on the CPU") != std::string::npos);
}

TEST_CASE("gpu layers: N, all and auto parse; anything else is refused", "[inference][vulkan]") {
    CHECK(parse_gpu_layers("3")->n == 3);
    CHECK(parse_gpu_layers("all")->how == gpu_layers::kind::all);
    CHECK(parse_gpu_layers("auto")->how == gpu_layers::kind::automatic);
    for (const char * bad : {"", "-1", "3x", "most"}) {
        INFO(bad);
        const auto r = parse_gpu_layers(bad);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.message().find("'all' or 'auto'") != std::string::npos);
    }
}

