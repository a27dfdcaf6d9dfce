// The last layers on the Vulkan device (layer_device.h) against the CPU: the stories260K models'
// greedy continuations of the golden prompts with an f16 cache, with some and all layers offloaded.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "inference/engine.h"
#include "inference/layer_device.h"
#include "inference/sampler.h"
#include "inference/sequence.h"
#include "tests/inference/golden_util.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;

namespace {

// A device for the model's last layers, or nullptr (with a warning) where none can run here.
std::unique_ptr<layer_device> device_for(const model & m, gpu_layers want) {
    auto d = make_layer_device(m, want, 512);
    if (!d) {
        WARN("no Vulkan offload here, the test did not run: " << d.message());
        return nullptr;
    }
    return std::move(*d);
}

struct continuation {
    std::vector<int32_t> tokens;      // greedy, free-running
    std::vector<float> first_logits;  // after the prompt
};

continuation greedy(engine & eng, const std::vector<int32_t> & prompt, int n_gen) {
    sequence seq(eng.make_cache(kernels::tensor_type::f16, 512));
    std::vector<float> logits;
    REQUIRE(eng.eval(seq.cache, prompt, logits).has_value());
    seq.tokens = prompt;
    continuation c{{}, logits};
    for (int i = 0; i < n_gen; ++i) {
        const int32_t tok = sampler::argmax(logits);
        c.tokens.push_back(tok);
        REQUIRE(decode_one(eng, seq, tok, logits).has_value());
    }
    return c;
}

}  // namespace

TEST_CASE("vulkan offload: stories260K greedy tokens identical to the CPU's with 2 and all layers offloaded",
          "[inference][vulkan]") {
    const char * model_file = GENERATE("stories260K-F32.gguf", "stories260K-F16.gguf", "stories260K-Q8_0.gguf",
                                       "stories260K-Q4_0.gguf");
    const std::string layers = GENERATE("2", "all");
    INFO(model_file << " --gpu-layers " << layers);
    auto tm = load_test_model(std::string(HEARTH_FIXTURES_DIR) + "/models/" + model_file);
    kernels::thread_pool pool(1);
    engine cpu(tm.mdl, pool);
    engine gpu(tm.mdl, pool);
    auto dev = device_for(tm.mdl, *parse_gpu_layers(layers));
    if (!dev) return;
    const int32_t n_layer = tm.mdl.hp().n_layer;
    CHECK(dev->first_layer() == (layers == "all" ? 0 : n_layer - 2));
    std::printf("%s\n", dev->describe().c_str());
    gpu.set_layer_device(std::move(dev));

    const auto golden = read_json_file(std::string(HEARTH_FIXTURES_DIR) + "/golden/stories260K-F32.fp32ref.json");
    int n_identical = 0, n_prompts = 0;
    float worst = 0;
    for (const auto & r : golden.at("results").as_array()) {
        const auto prompt = json_ids(r.at("prompt_tokens"));
        const auto want = greedy(cpu, prompt, 16);
        const auto got = greedy(gpu, prompt, 16);
        REQUIRE(gpu.device() != nullptr);   // it ran on the device throughout
        n_identical += got.tokens == want.tokens;
        ++n_prompts;
        for (size_t i = 0; i < want.first_logits.size(); ++i)
            worst = std::max(worst, std::fabs(got.first_logits[i] - want.first_logits[i]));
    }
    std::printf("vulkan offload %s --gpu-layers %s: %d/%d greedy continuations identical, max |dlogit| %.3g\n",
                model_file, layers.c_str(), n_identical, n_prompts, worst);
    // The device's products, norms and KV rows are the CPU's to the bit (q8_0 activations, f16 and
    // f32 sums, kv_append), but its exp, sin and cos are not: a last-bit difference that moves an
    // activation across a q8_0 rounding boundary changes a logit by ~0.1 on this tiny model
    // (measured over 32 tokens: Q8_0 with all 5 layers offloaded, 4 of 5 continuations identical;
    // every other model and placement 5 of 5; over the 16 here, 5 of 5 everywhere). Where the activations are quantized and every layer is
    // offloaded, one continuation in five may part; everywhere else none.
    const bool q8_activations = std::string(model_file).find("Q") != std::string::npos;
    CHECK(n_identical >= n_prompts - (q8_activations && layers == "all" ? 1 : 0));
    CHECK(worst < (q8_activations && layers == "all" ? 0.25f : 0.02f));
}

TEST_CASE("vulkan offload: a cache type the device does not take runs on the CPU, bit for bit",
          "[inference][vulkan]") {
    auto tm = load_test_model(std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-Q8_0.gguf");
    kernels::thread_pool pool(1);
    engine cpu(tm.mdl, pool), gpu(tm.mdl, pool);
    auto dev = device_for(tm.mdl, {gpu_layers::kind::all, 0, 0});
    if (!dev) return;
    gpu.set_layer_device(std::move(dev));
    const std::vector<int32_t> prompt = {1, 400, 30, 200, 7};
    std::vector<float> want, got;
    auto c1 = cpu.make_cache(kernels::tensor_type::f32, 64), c2 = gpu.make_cache(kernels::tensor_type::f32, 64);
    REQUIRE(cpu.eval(c1, prompt, want).has_value());
    REQUIRE(gpu.eval(c2, prompt, got).has_value());
    CHECK(got == want);
}

TEST_CASE("vulkan offload: auto places as many layers as a capped device memory holds", "[inference][vulkan]") {
    auto tm = load_test_model(std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf");
    const int32_t n_layer = tm.mdl.hp().n_layer;
    auto all = device_for(tm.mdl, {gpu_layers::kind::automatic, 0, 0});
    if (!all) return;
    CHECK(all->first_layer() == 0);   // the whole model fits
    // One layer of stories260K with a 512-position f16 cache: its weights plus 2 * 512 * 32 * 2 bytes.
    const auto & L = tm.mdl.layers().back();
    uint64_t one = 2ull * 512 * tm.mdl.hp().n_embd_kv() * 2 + 2ull * tm.mdl.hp().n_embd * 4;
    for (const weight * w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) one += w->n_rows * w->row_bytes;
    const uint64_t cap = static_cast<uint64_t>(2.5 * static_cast<double>(one) / 0.8);   // 2.5 layers within the margin
    auto two = make_layer_device(tm.mdl, {gpu_layers::kind::automatic, 0, cap}, 512);
    REQUIRE(two.has_value());
    CHECK((*two)->first_layer() == n_layer - 2);
    auto none = make_layer_device(tm.mdl, {gpu_layers::kind::automatic, 0, 1024}, 512);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.message().find("holds none") != std::string::npos);
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
