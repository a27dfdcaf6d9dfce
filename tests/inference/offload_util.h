// What the offload tests of every GPU backend share (tests/inference/vulkan, tests/inference/cuda):
// a device for the model's last layers or a skip that says why, greedy continuations, and the
// golden check: the stories260K models' greedy continuations of the golden prompts with an f16
// cache against the CPU engine, with the bounds docs/gpu.md states.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "inference/decode/sampler.h"
#include "inference/device/layer_device.h"
#include "inference/forward/engine.h"
#include "inference/session/sequence.h"
#include "inference/session/session_cache.h"
#include "inference/session/slot_store.h"
#include "kernels/quant.h"
#include "tests/default_model.h"
#include "tests/inference/golden_util.h"
#include "tests/inference/python_util.h"
#include "tests/skip.h"

namespace hearth::inference::testing {

// The backend's ("Vulkan", "CUDA") device for m's last layers, or nullptr with the case skipped
// where none can run here. With HEARTH_CUDA_PRESENT=1 (scripts/gpu-check on a GPU machine) a
// missing CUDA device fails instead.
inline std::unique_ptr<layer_device> device_or_skip(const char * backend, const model & m, const gpu_layers & want,
                                                    int32_t n_ctx = 512) {
    auto d = make_layer_device_on(backend, m, want, offload_room{n_ctx});
    if (d) return std::move(d->device);
    const char * present = std::getenv("HEARTH_CUDA_PRESENT");
    if (std::string(backend) == "CUDA" && present && std::string(present) == "1")
        FAIL("HEARTH_CUDA_PRESENT=1 but: " << d.message());
    ::hearth::test::skip(std::string("no ") + backend + " offload here: " + d.message());
    return nullptr;
}

struct continuation {
    std::vector<int32_t> tokens;      // greedy, free-running
    std::vector<float> first_logits;  // after the prompt
    // The cache after the prompt: the layers whose rows the host holds, and the device's bytes.
    int32_t host_layers = 0, n_alloc = 0;
    uint64_t device_bytes = 0;
    bool k_smoothed = false;   // the cache held smoothed keys (k_smoothing.h)
};

inline continuation greedy(engine & eng, const std::vector<int32_t> & prompt, int n_gen,
                           const kv_types & cache_types = kernels::tensor_type::f16) {
    sequence seq(eng.make_cache(cache_types, 512));
    std::vector<float> logits;
    REQUIRE(eng.eval(seq.cache, prompt, logits).has_value());
    seq.tokens = prompt;
    continuation c{{}, logits, seq.cache.host_layers(), seq.cache.n_alloc(), seq.cache.device_bytes(),
                   seq.cache.k_smoothed()};
    for (int i = 0; i < n_gen; ++i) {
        const int32_t tok = sampler::argmax(logits);
        c.tokens.push_back(tok);
        REQUIRE(decode_one(eng, seq, tok, logits).has_value());
    }
    return c;
}

// model_file (in the fixtures) with `layers` (--gpu-layers) on the backend: the greedy
// continuations (16 tokens) of the 5 golden prompts against the CPU engine's.
inline void check_golden_offload(const char * backend, const std::string & model_file,
                                 const std::string & layers) {
    INFO(backend << ": " << model_file << " --gpu-layers " << layers);
    auto tm = load_test_model(std::string(HEARTH_FIXTURES_DIR) + "/models/" + model_file);
    kernels::thread_pool pool(1);
    engine cpu(tm.mdl, pool);
    engine gpu(tm.mdl, pool);
    auto dev = device_or_skip(backend, tm.mdl, *parse_gpu_layers(layers));
    if (!dev) return;
    const int32_t n_layer = tm.mdl.hp().n_layer;
    CHECK(dev->first_layer() == (layers == "all" ? 0 : n_layer - std::stoi(layers)));
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
    std::printf("%s offload %s --gpu-layers %s: %d/%d greedy continuations identical, max |dlogit| %.3g\n", backend,
                model_file.c_str(), layers.c_str(), n_identical, n_prompts, worst);
    // The device's products, norms and KV rows are the CPU's to the bit (q8_0 activations, f16 and
    // f32 sums, kv_append), but its exp, sin and cos are not: a last-bit difference that moves an
    // activation across a q8_0 rounding boundary changes a logit by ~0.1 on this tiny model
    // (measured on lavapipe over 32 tokens: Q8_0 with all 5 layers offloaded, 4 of 5 continuations
    // identical; every other model and placement 5 of 5; over the 16 here, 5 of 5 everywhere).
    // Where the activations are quantized and every layer is offloaded, one continuation in five
    // may part; everywhere else none.
    const bool q8_activations = model_file.find("Q") != std::string::npos;
    CHECK(n_identical >= n_prompts - (q8_activations && layers == "all" ? 1 : 0));
    CHECK(worst < (q8_activations && layers == "all" ? 0.25f : 0.02f));
}

// One model with `layers` on the backend against the CPU over prompts: greedy continuations of
// n_gen tokens, how many are identical, and the largest logit difference after the prompts.
struct offload_comparison {
    int n_prompts = 0, n_identical = 0;
    float max_diff = 0;
    bool ran = false;      // false: the backend could not take the model (the case is skipped)
    bool output = false;   // the device ran the output block too
};

inline offload_comparison compare_offload(const char * backend, const model & m,
                                          const std::string & layers, const std::vector<std::vector<int32_t>> & prompts,
                                          int n_gen) {
    kernels::thread_pool pool(2);
    engine cpu(m, pool), gpu(m, pool);
    offload_comparison out;
    auto dev = device_or_skip(backend, m, *parse_gpu_layers(layers));
    if (!dev) return out;
    std::printf("%s\n", dev->describe().c_str());
    out.output = dev->runs_output();
    gpu.set_layer_device(std::move(dev));
    for (const auto & prompt : prompts) {
        const auto want = greedy(cpu, prompt, n_gen);
        const auto got = greedy(gpu, prompt, n_gen);
        REQUIRE(gpu.device() != nullptr);   // it ran on the device throughout
        out.n_identical += got.tokens == want.tokens;
        ++out.n_prompts;
        for (size_t i = 0; i < want.first_logits.size(); ++i)
            out.max_diff = std::max(out.max_diff, std::fabs(got.first_logits[i] - want.first_logits[i]));
    }
    out.ran = true;
    return out;
}

// The prompts of a golden file (tests/golden/...: results[].prompt_tokens).
inline std::vector<std::vector<int32_t>> golden_prompts(const std::string & golden_file) {
    std::vector<std::vector<int32_t>> prompts;
    const auto golden = read_json_file(golden_file);
    for (const auto & r : golden.at("results").as_array())
        prompts.push_back(json_ids(r.at("prompt_tokens")));
    return prompts;
}

// Every architecture's small models (tests/python/write_arch_models.py; the Q4_K_M fixtures) with
// 1, half and all layers on the backend: greedy continuations of their golden prompts identical
// to the CPU's, and the logits after the prompts within the bounds docs/gpu.md states.
inline void check_arch_offload(const char * backend) {
    temp_dir dir;
    run_python("write_arch_models.py", quoted(dir.path.string()));
    const std::string golden_dir = std::string(HEARTH_SOURCE_DIR) + "/tests/golden/arch/";
    const std::string fixture_dir = std::string(HEARTH_SOURCE_DIR) + "/tests/fixtures/models/arch/";
    for (const char * name : {"qwen3-F32", "starcoder2-F32", "gemma3-F32", "phi3-F32", "phi3-longrope-F32", "granite-F32",
                              "qwen3moe-F32", "mistral-F32", "codellama-F32", "llama3-F32", "deepseek-coder-F32",
                              "qwen3moe-F16", "qwen3-Q4_K_M", "starcoder2-Q4_K_M", "gemma3-Q4_K_M", "phi3-Q4_K_M",
                              "granite-Q4_K_M"}) {
        const bool k_quant = std::string(name).ends_with("Q4_K_M");
        const auto tm = load_test_model((k_quant ? fixture_dir : dir.path.string() + "/") + name + ".gguf");
        const auto prompts = golden_prompts(golden_dir + name + ".json");
        const int32_t n_layer = tm.mdl.hp().n_layer;
        for (const std::string layers : {std::string("1"), std::to_string(std::max(1, n_layer / 2)), std::string("all")}) {
            INFO(name << " --gpu-layers " << layers);
            const auto r = compare_offload(backend, tm.mdl, layers, prompts, 8);
            if (!r.ran) return;
            std::printf("%s offload %s --gpu-layers %s: %d/%d greedy continuations identical, max |dlogit| %.3g\n",
                        backend, name, layers.c_str(), r.n_identical, r.n_prompts, r.max_diff);
            // F32/F16: the device's sums apart from the CPU's by float rounding (measured on lavapipe:
            // at most 0.012 over the models and placements). Q4_K_M: the K-quant products take q8_K
            // activations as the CPU's do, but a last-bit difference elsewhere (attention, RoPE)
            // that moves an activation across a q8 rounding boundary moves these tiny models' logits
            // by tenths: 0.39 at most (0.49 while the device took f32 activations), and phi3's
            // third prompt parts after its prompt at a near-tie with every layer offloaded.
            CHECK(r.output == (layers == "all"));   // with every layer, the output block runs there too
            CHECK(r.n_identical >= r.n_prompts - (k_quant ? 1 : 0));
            CHECK(r.max_diff < (k_quant ? 0.5f : 0.02f));
        }
    }
}

// The real gemma-3-270m (when the model cache has it) with every layer on the backend: 4 greedy
// tokens after each of its golden prompts (lavapipe runs it at about 1 token a second).
inline void check_gemma_offload(const char * backend) {
    const std::string path = hearth::test::pinned_model_file("gemma-3-270m-q4_k_m");
    if (path.empty()) HEARTH_SKIP("gemma-3-270m is not in the model cache (scripts/fetch-model --model gemma-3-270m-q4_k_m)");
    const auto tm = load_test_model(path);
    const auto prompts = golden_prompts(std::string(HEARTH_SOURCE_DIR) + "/tests/golden/gemma-3-270m-q4_k_m/completions.json");
    const auto r = compare_offload(backend, tm.mdl, "all", prompts, 4);
    if (!r.ran) return;
    std::printf("%s offload gemma-3-270m --gpu-layers all: %d/%d greedy continuations identical, max |dlogit| %.3g\n",
                backend, r.n_identical, r.n_prompts, r.max_diff);
    CHECK(r.n_identical == r.n_prompts);
    // Over its 262,144 logits after 313-344 prompt tokens through 18 layers, last-bit differences
    // moved across q8 rounding boundaries (the K-quant products take q8_K activations on both):
    // 3.0 on lavapipe (2.9 while the device took f32 activations).
    CHECK(r.max_diff < 4.0f);
}

// What one engine answers through a session cache: greedy tokens after a cold prompt, after a
// prompt that reuses its prefix, after the slot went to disk and came back, after a prompt whose
// middle moved (chunk reuse, the K rows re-rotated), and after the device was taken away.
struct session_answers {
    std::vector<std::vector<int32_t>> tokens;   // per step
    std::vector<int32_t> reused;                // positions prefill kept, per step
    uint64_t used_bytes = 0, device_bytes = 0;  // of the session cache after the first step
    int32_t host_layers = 0, n_alloc = 0;       // of the slot's cache after the first step
    uint64_t n_restored = 0;
};

inline session_answers session_steps(engine & eng, const std::string & slot_dir, const model_identity & id) {
    session_answers out;
    slot_store store(slot_dir, id);
    session_cache sc(eng, kernels::tensor_type::f16, 512, 64ull << 20);
    sc.attach_store(&store);
    std::vector<float> logits;
    std::vector<int32_t> prompt;
    for (int i = 0; i < 40; ++i) prompt.push_back(3 + (i * 37 + 11) % 500);
    const auto step = [&](const std::vector<int32_t> & p, int32_t chunk_min) {
        auto s = sc.acquire("file:///a.txt", 400);
        REQUIRE(s.has_value());
        auto st = prefill(eng, **s, p, logits, prefill_options{true, chunk_min, {}});
        REQUIRE(st.has_value());
        out.reused.push_back(st->n_reused);
        std::vector<int32_t> got;
        for (int i = 0; i < 8; ++i) {
            got.push_back(sampler::argmax(logits));
            REQUIRE(decode_one(eng, **s, got.back(), logits).has_value());
        }
        out.tokens.push_back(got);
        return got;
    };
    const auto first = step(prompt, 0);
    out.used_bytes = sc.stats().used_bytes;
    out.device_bytes = sc.stats().device_bytes;
    const kv_cache & c = (*sc.acquire("file:///a.txt", 400))->cache;
    out.host_layers = c.host_layers();
    out.n_alloc = c.n_alloc();
    // The prefix and four of the generated tokens, then new ones.
    std::vector<int32_t> second = prompt;
    second.insert(second.end(), first.begin(), first.begin() + 4);
    for (int i = 0; i < 6; ++i) second.push_back(7 + i * 31);
    step(second, 0);
    // To disk and back: the restored rows are the host's until the device adopts them.
    sc.evict("file:///a.txt");
    std::vector<int32_t> third = second;
    third.push_back(101);
    third.push_back(202);
    step(third, 0);
    out.n_restored = sc.stats().n_restored;
    // An edit near the start: the 40 tokens after it move right by 3 (chunk reuse re-rotates their K).
    std::vector<int32_t> fourth(third.begin(), third.begin() + 2);
    for (int32_t t : {303, 304, 305}) fourth.push_back(t);
    fourth.insert(fourth.end(), third.begin() + 2, third.end());
    step(fourth, 16);
    // Without the device: its rows come home and the CPU goes on from them.
    eng.set_layer_device(nullptr);
    std::vector<int32_t> fifth = fourth;
    fifth.push_back(404);
    fifth.push_back(405);
    step(fifth, 0);
    return out;
}

// The session cache's work with `layers` on the backend gives the CPU's greedy tokens at every
// step, and the slot's offloaded rows are on the device, accounted there.
inline void check_session_cache_offload(const char * backend, const std::string & layers) {
    INFO(backend << ": stories260K-F32 --gpu-layers " << layers);
    const std::string path = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf";
    auto tm = load_test_model(path);
    auto id = identify_model(path);
    REQUIRE(id.has_value());
    kernels::thread_pool pool(1);
    engine cpu(tm.mdl, pool), gpu(tm.mdl, pool);
    auto dev = device_or_skip(backend, tm.mdl, *parse_gpu_layers(layers));
    if (!dev) return;
    const int32_t first = dev->first_layer();
    gpu.set_layer_device(std::move(dev));
    const auto root = std::filesystem::temp_directory_path() / ("hearth-offload-slots-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root);
    const auto want = session_steps(cpu, (root / "cpu").string(), *id);
    const auto got = session_steps(gpu, (root / "gpu").string(), *id);
    std::filesystem::remove_all(root);
    REQUIRE(got.tokens.size() == want.tokens.size());
    for (size_t i = 0; i < want.tokens.size(); ++i) {
        INFO("step " << i);
        CHECK(got.tokens[i] == want.tokens[i]);
        CHECK(got.reused[i] == want.reused[i]);
    }
    CHECK(want.reused[1] == 40);   // the prefix was kept (not the decoded tokens: prefill computes those again)
    CHECK(want.reused[3] > 40);   // the moved chunk was kept
    CHECK(got.n_restored == 1);
    // The offloaded layers' rows live on the device; the slot costs what it cost on the CPU.
    const hparams & hp = tm.mdl.hp();
    CHECK(got.host_layers == first);
    CHECK(got.device_bytes == 2ull * (hp.n_layer - first) * got.n_alloc * hp.n_embd_kv() * sizeof(uint16_t));
    CHECK(want.device_bytes == 0);
    CHECK(got.used_bytes == want.used_bytes);
}

// The default model with its last 2 layers on the backend and a cache of `types` (quantized):
// those layers' K/V rows live on the device in these types, and the first 100 tokens of three
// golden prompts continue as on the CPU. The device's sums run in another order than the CPU's,
// so its K and V rows differ in their last bits and a quantized row rounds such a difference to
// a whole step now and then (on lavapipe: f16 moves the logits by up to 0.31, q8_0/q4_0 by 0.18,
// q4_0/q8_0 by 0.14; docs/gpu.md): the bound leaves room for that, and one continuation may part
// where two tokens are closer than it.
inline void check_quantized_cache_offload(const char * backend, const std::string & model_path, const kv_types & types) {
    INFO(backend << ", cache " << kv_types_name(types));
    auto tm = load_test_model(model_path);
    kernels::thread_pool pool(2);
    engine cpu(tm.mdl, pool), gpu(tm.mdl, pool);
    auto dev = device_or_skip(backend, tm.mdl, *parse_gpu_layers("2"));
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
        // The last two layers' rows are on the device, in these types (a quantized K smoothed on
        // both sides; these layers have no K scales: check_smoothed_cache_offload has one that does).
        REQUIRE(got.host_layers == hp.n_layer - 2);
        CHECK(got.device_bytes == kv_bytes_per_token(types, 2, hp.n_embd_kv()) * got.n_alloc);
        CHECK(got.k_smoothed == want.k_smoothed);
        for (size_t i = 0; i < want.first_logits.size(); ++i)
            worst = std::max(worst, std::fabs(want.first_logits[i] - got.first_logits[i]));
        n_identical += got.tokens == want.tokens;
        ++n_prompts;
    }
    std::printf("%s offload, default model, --gpu-layers 2, cache %s: %d/%d greedy continuations identical, "
                "max |dlogit| after the prompt %.3g\n", backend, kv_types_name(types).c_str(), n_identical, n_prompts,
                worst);
    CHECK(n_identical >= n_prompts - 1);
    CHECK(worst < 0.75f);
}

// A smoothed q8_0 K made on the device (k_smoothing.h): the default model's K scales are in
// layers 0-4 and 8, so with 16 layers there layer 8's keys are divided and its queries multiplied
// by the device. Its layer-8 K rows must be the CPU's (up to a q8 step where the products
// differ in the last bits; an unscaled pair would be s >= 2 times the CPU's, 8 and more apart),
// and the logits may part from the CPU's only as far as its f16 cache's part from the CPU's f16
// one (last-bit differences through 16 layers).
inline void check_smoothed_cache_offload(const char * backend, const std::string & model_path) {
    auto tm = load_test_model(model_path);
    kernels::thread_pool pool(2);
    engine cpu(tm.mdl, pool), gpu(tm.mdl, pool);
    REQUIRE(cpu.smoothing().scales(8));
    auto dev = device_or_skip(backend, tm.mdl, {gpu_layers::kind::count, 16, 0});
    if (!dev) return;
    gpu.set_layer_device(std::move(dev));
    const auto golden = read_json_file(std::string(HEARTH_SOURCE_DIR) +
                                       "/tests/golden/qwen2.5-coder-0.5b-instruct-q4_k_m/completions.json");
    auto prompt = json_ids(golden.at("results").as_array()[0].at("prompt_tokens"));
    prompt.resize(64);   // lavapipe is slow: 16 layers over 64 tokens and 4 more
    using kernels::tensor_type;
    float drift[2] = {0, 0};
    const kv_types types[2] = {kv_types(tensor_type::f16), kv_types(tensor_type::q8_0, tensor_type::f16)};
    for (int i = 0; i < 2; ++i) {
        INFO(backend << ", cache " << kv_types_name(types[i]));
        const auto want = greedy(cpu, prompt, 4, types[i]);
        const auto got = greedy(gpu, prompt, 4, types[i]);
        REQUIRE(got.host_layers == tm.mdl.hp().n_layer - 16);
        CHECK(want.k_smoothed == (i == 1));
        CHECK(got.k_smoothed == want.k_smoothed);
        CHECK(got.tokens == want.tokens);
        for (size_t j = 0; j < want.first_logits.size(); ++j)
            drift[i] = std::max(drift[i], std::fabs(want.first_logits[j] - got.first_logits[j]));
    }
    // Layer 8's K rows after the prompt, from the device and from the CPU, dequantized.
    sequence on_cpu(cpu.make_cache(types[1], 512)), on_device(gpu.make_cache(types[1], 512));
    std::vector<float> logits;
    REQUIRE(cpu.eval(on_cpu.cache, prompt, logits).has_value());
    REQUIRE(gpu.eval(on_device.cache, prompt, logits).has_value());
    REQUIRE(on_device.cache.bring_home().has_value());
    const int64_t n_kv = tm.mdl.hp().n_embd_kv();
    std::vector<float> a(static_cast<size_t>(n_kv)), b(a.size());
    float k_apart = 0;
    for (int32_t t = 0; t < static_cast<int32_t>(prompt.size()); ++t) {
        kernels::dequantize_row(types[1].k, on_cpu.cache.k_row(8, t), a.data(), n_kv);
        kernels::dequantize_row(types[1].k, on_device.cache.k_row(8, t), b.data(), n_kv);
        for (size_t c = 0; c < a.size(); ++c) k_apart = std::max(k_apart, std::fabs(a[c] - b[c]));
    }
    std::printf("%s offload, default model, --gpu-layers 16: layer 8's smoothed K rows at most %.3g from the CPU's; "
                "max |dlogit| against the CPU after 64 tokens: f16 %.3g, q8_0 smoothed/f16 %.3g\n", backend, k_apart,
                drift[0], drift[1]);
    CHECK(k_apart < 1.0f);
    CHECK(drift[1] < 2 * drift[0] + 0.1f);
}

// A cache type the device does not take (f32): the layers run on the CPU, bit for bit.
inline void check_untaken_cache_on_cpu(const char * backend) {
    auto tm = load_test_model(std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-Q8_0.gguf");
    kernels::thread_pool pool(1);
    engine cpu(tm.mdl, pool), gpu(tm.mdl, pool);
    auto dev = device_or_skip(backend, tm.mdl, {gpu_layers::kind::all, 0, 0});
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

}  // namespace hearth::inference::testing
