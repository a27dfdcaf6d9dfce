// The last layers on the CUDA device against the CPU: the stories260K models' greedy continuations
// of the golden prompts with an f16 cache, 2 and all layers offloaded, as tests/inference/vulkan
// holds the Vulkan backend (tests/inference/offload_util.h); the default model over q8_0 / q4_0
// caches on the device; the CPU fallback for a cache it does not take. Without a CUDA device each
// case is skipped with the reason (with HEARTH_CUDA_PRESENT=1 it fails).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tests/default_model.h"
#include "tests/inference/offload_util.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;

TEST_CASE("cuda offload: stories260K greedy tokens identical to the CPU's with 2 and all layers offloaded",
          "[inference][cuda]") {
    const char * model_file = GENERATE("stories260K-F32.gguf", "stories260K-F16.gguf", "stories260K-Q8_0.gguf",
                                       "stories260K-Q4_0.gguf");
    const std::string layers = GENERATE("2", "all");
    check_golden_offload("CUDA", model_file, layers);
}

TEST_CASE("cuda offload: every architecture's small models with 1, half and all layers on the device give the "
          "CPU's greedy tokens", "[inference][cuda][arch]") {
    check_arch_offload("CUDA");
}

TEST_CASE("cuda offload: gemma-3-270m with every layer on the device gives the CPU's greedy continuations",
          "[inference][cuda][pinned-model]") {
    check_gemma_offload("CUDA");
}

TEST_CASE("cuda offload: the session cache's prefix reuse, slot files and chunk reuse give the CPU's tokens, "
          "the offloaded rows on the device", "[inference][cuda]") {
    const std::string layers = GENERATE("2", "all");
    check_session_cache_offload("CUDA", layers);
}

TEST_CASE("cuda offload: q8_0 and q4_0 caches, K and V apart, live on the device and continue the golden "
          "prompts as the CPU does", "[inference][cuda][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(path);
    using kernels::tensor_type;
    const kv_types types = GENERATE(kv_types(tensor_type::q8_0, tensor_type::q8_0), kv_types(tensor_type::q8_0, tensor_type::q4_0),
                                    kv_types(tensor_type::q4_0, tensor_type::q8_0));
    INFO("cache " << kv_types_name(types));
    auto tm = load_test_model(path);
    kernels::thread_pool pool(2);
    engine cpu(tm.mdl, pool), gpu(tm.mdl, pool);
    auto dev = device_or_skip("CUDA", tm.mdl, *parse_gpu_layers("2"));
    if (!dev) return;
    REQUIRE(dev->takes_cache(types));
    gpu.set_layer_device(std::move(dev));
    const auto golden = read_json_file(std::string(HEARTH_SOURCE_DIR) +
                                       "/tests/golden/qwen2.5-coder-0.5b-instruct-q4_k_m/completions.json");
    const hparams & hp = tm.mdl.hp();
    int n_identical = 0, n_prompts = 0;
    float worst = 0;
    for (const auto & r : golden.at("results").as_array()) {
        if (n_prompts == 3) break;
        auto prompt = json_ids(r.at("prompt_tokens"));
        prompt.resize(std::min<size_t>(prompt.size(), 100));
        const auto want = greedy(cpu, prompt, 8, types);
        const auto got = greedy(gpu, prompt, 8, types);
        // The last two layers' rows are on the device, in these types.
        REQUIRE(got.host_layers == hp.n_layer - 2);
        CHECK(got.device_bytes == kv_bytes_per_token(types, 2, hp.n_embd_kv()) * got.n_alloc);
        for (size_t i = 0; i < want.first_logits.size(); ++i)
            worst = std::max(worst, std::fabs(want.first_logits[i] - got.first_logits[i]));
        n_identical += got.tokens == want.tokens;
        ++n_prompts;
    }
    std::printf("CUDA offload, default model, --gpu-layers 2, cache %s: %d/%d greedy continuations identical, "
                "max |dlogit| after the prompt %.3g\n", kv_types_name(types).c_str(), n_identical, n_prompts, worst);
    // The Vulkan test's bounds (docs/gpu.md): the device's sums run in another order than the
    // CPU's, so a quantized K or V row now and then rounds a last-bit difference to a whole step.
    CHECK(n_identical >= n_prompts - 1);
    CHECK(worst < 0.75f);
}

TEST_CASE("cuda offload: a cache type the device does not take runs on the CPU, bit for bit", "[inference][cuda]") {
    auto tm = load_test_model(std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-Q8_0.gguf");
    kernels::thread_pool pool(1);
    engine cpu(tm.mdl, pool), gpu(tm.mdl, pool);
    auto dev = device_or_skip("CUDA", tm.mdl, {gpu_layers::kind::all, 0, 0});
    if (!dev) return;
    CHECK_FALSE(dev->takes_cache(kv_types(kernels::tensor_type::f32, kernels::tensor_type::f32)));
    gpu.set_layer_device(std::move(dev));
    const std::vector<int32_t> prompt = {1, 400, 30, 200, 7};
    std::vector<float> want, got;
    auto c1 = cpu.make_cache(kernels::tensor_type::f32, 64), c2 = gpu.make_cache(kernels::tensor_type::f32, 64);
    REQUIRE(cpu.eval(c1, prompt, want).has_value());
    REQUIRE(gpu.eval(c2, prompt, got).has_value());
    CHECK(got == want);
}
