// The last layers on the CUDA device against the CPU: the stories260K models' greedy continuations
// of the golden prompts with an f16 cache, 2 and all layers offloaded, as tests/inference/vulkan
// holds the Vulkan backend (tests/inference/offload_util.h). Without a CUDA device each case is
// skipped with the reason (with HEARTH_CUDA_PRESENT=1 it fails).
#include <catch2/catch.hpp>

#include "inference/cuda_layers.h"
#include "tests/inference/offload_util.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;

TEST_CASE("cuda offload: stories260K greedy tokens identical to the CPU's with 2 and all layers offloaded",
          "[inference][cuda]") {
    const char * model_file = GENERATE("stories260K-F32.gguf", "stories260K-F16.gguf", "stories260K-Q8_0.gguf",
                                       "stories260K-Q4_0.gguf");
    const std::string layers = GENERATE("2", "all");
    check_golden_offload(make_cuda_layers, "CUDA", model_file, layers);
}

TEST_CASE("cuda offload: the session cache's prefix reuse, slot files and chunk reuse give the CPU's tokens, "
          "the offloaded rows on the device", "[inference][cuda]") {
    const std::string layers = GENERATE("2", "all");
    check_session_cache_offload(make_cuda_layers, "CUDA", layers);
}
