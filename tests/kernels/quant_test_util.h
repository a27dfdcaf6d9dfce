// Helpers shared by the quant-format tests: random rows, type names, the Python oracle runner.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/dispatch.h"
#include "kernels/quant.h"

namespace hearth::kernels::test {

inline std::vector<uint8_t> read_file_bytes(const std::filesystem::path & p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The Python interpreter with the `gguf` package, or "" where the oracles cannot run (for example
// the aarch64 build under qemu, which has no aarch64 Python).
inline std::string oracle_python() {
#ifdef HEARTH_PYTHON
    const std::string py = HEARTH_PYTHON;
    if (!py.empty() && std::filesystem::exists(py)) return py;
#endif
    return {};
}

inline std::string source_dir() {
#ifdef HEARTH_SOURCE_DIR
    return HEARTH_SOURCE_DIR;
#else
    return ".";
#endif
}

// Weight-row bytes for n elements: random quants with ordinary f16 scales, so dot products are
// finite and meaningful. Built by quantizing random floats where the type has a quantizer, or by
// randomizing the bytes and then fixing the scale fields.
std::vector<uint8_t> random_weight_row(tensor_type t, int64_t n, uint32_t seed);

// Activation-row bytes of vec_dot_type(t) for n random floats.
std::vector<uint8_t> random_activation_row(tensor_type t, int64_t n, uint32_t seed);

inline std::vector<float> random_floats(int64_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto & x : v) x = dist(rng);
    return v;
}

}  // namespace hearth::kernels::test
