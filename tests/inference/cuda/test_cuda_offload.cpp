// The last layers on the CUDA device against the CPU: the stories260K models' greedy continuations
// of the golden prompts with an f16 cache, 2 and all layers offloaded, as tests/inference/vulkan
// holds the Vulkan backend (tests/inference/offload_util.h). Without a CUDA device each case is
// skipped with the reason (with HEARTH_CUDA_PRESENT=1 it fails).
#include <catch2/catch.hpp>

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
