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
    check_quantized_cache_offload("CUDA", path, types);
}

TEST_CASE("cuda offload: a smoothed q8_0 K on the device (layer 8's K scales there) continues the golden prompts as "
          "the CPU's smoothed K does", "[inference][cuda][default-model][k_smoothing]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(path);
    check_smoothed_cache_offload("CUDA", path);
}

TEST_CASE("cuda offload: a cache type the device does not take runs on the CPU, bit for bit", "[inference][cuda]") {
    check_untaken_cache_on_cpu("CUDA");
}
