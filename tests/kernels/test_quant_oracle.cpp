// dequantize_row and quantize_row of every ISA variant against the `gguf` package (numpy),
// bit for bit, on random blocks with hostile f16 scales (see tests/python/quant_oracle.py).
// Q8_0's quantize_row follows llama.cpp's CPU quantizer, which the oracle spells out in numpy
// next to the gguf package's (they differ at ties).
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <sstream>

#include <unistd.h>

#include "kernels/cpu/dispatch.h"
#include "kernels/quant.h"
#include "tests/kernels/quant_test_util.h"
#include "tests/skip.h"

using namespace hearth::kernels;
namespace fs = std::filesystem;

namespace {

struct oracle_case {
    std::string kind;   // "deq" or "quant"
    std::string type;   // the gguf package's name: Q4_K, F16, ...
    int64_t n;
};

tensor_type type_from_gguf_name(const std::string & name) {
    for (uint32_t raw = 0; raw < cpu::k_n_tensor_types; ++raw) {
        const auto & info = tensor_type_info(raw);
        if (!info.known) continue;
        std::string upper(info.name);
        for (auto & c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (upper == name) return static_cast<tensor_type>(raw);
    }
    FAIL("unknown type name from the oracle: " << name);
    return tensor_type::f32;
}

// Runs the oracle once per test run; returns its output folder, or "" when Python is missing.
const fs::path & oracle_dir() {
    static const fs::path dir = [] {
        const std::string py = test::oracle_python();
        if (py.empty()) return fs::path{};
        const fs::path out = fs::temp_directory_path() / ("hearth_quant_oracle_" + std::to_string(getpid()));
        const std::string cmd = py + " " + test::source_dir() + "/tests/python/quant_oracle.py random " + out.string();
        if (std::system(cmd.c_str()) != 0) return fs::path{};
        return out;
    }();
    return dir;
}

std::vector<oracle_case> oracle_cases(const fs::path & dir) {
    std::ifstream idx(dir / "index.txt");
    std::vector<oracle_case> cases;
    oracle_case c;
    while (idx >> c.kind >> c.type >> c.n) cases.push_back(c);
    return cases;
}

std::string first_difference(const void * got, const void * want, size_t bytes) {
    const auto * g = static_cast<const uint8_t *>(got);
    const auto * w = static_cast<const uint8_t *>(want);
    for (size_t i = 0; i < bytes; ++i) {
        if (g[i] != w[i]) {
            std::ostringstream s;
            s << "first differing byte " << i << ": got 0x" << std::hex << int(g[i]) << " want 0x" << int(w[i]);
            return s.str();
        }
    }
    return "identical";
}

}  // namespace

TEST_CASE("dequantize_row matches the gguf package bit for bit", "[kernels][quant][oracle]") {
    const fs::path & dir = oracle_dir();
    if (dir.empty()) HEARTH_SKIP("no Python with the gguf package here (HEARTH_PYTHON; scripts/setup installs it)");
    int checked = 0;
    for (const auto & c : oracle_cases(dir)) {
        if (c.kind != "deq") continue;
        const tensor_type t = type_from_gguf_name(c.type);
        const auto raw = test::read_file_bytes(dir / ("deq_" + c.type + ".bin"));
        const auto want = test::read_file_bytes(dir / ("deq_" + c.type + ".f32"));
        REQUIRE(raw.size() == row_size(t, c.n));
        REQUIRE(want.size() == static_cast<size_t>(c.n) * sizeof(float));
        for (cpu::isa isa : cpu::available_isas()) {
            INFO("type " << c.type << ", isa " << cpu::isa_name(isa));
            std::vector<float> got(static_cast<size_t>(c.n));
            cpu::quant_kernels_for(isa)[t].dequantize_row(raw.data(), got.data(), c.n);
            INFO(first_difference(got.data(), want.data(), want.size()));
            CHECK(std::memcmp(got.data(), want.data(), want.size()) == 0);
        }
        ++checked;
    }
    CHECK(checked == 15);
}

TEST_CASE("quantize_row matches the gguf package byte for byte", "[kernels][quant][oracle]") {
    const fs::path & dir = oracle_dir();
    if (dir.empty()) HEARTH_SKIP("no Python with the gguf package here (HEARTH_PYTHON; scripts/setup installs it)");
    int checked = 0;
    for (const auto & c : oracle_cases(dir)) {
        if (c.kind != "quant") continue;
        const tensor_type t = type_from_gguf_name(c.type);
        const auto in = test::read_file_bytes(dir / ("q_" + c.type + ".in"));
        const auto want = test::read_file_bytes(dir / ("q_" + c.type + ".out"));
        REQUIRE(in.size() == static_cast<size_t>(c.n) * sizeof(float));
        REQUIRE(want.size() == row_size(t, c.n));
        std::vector<float> x(static_cast<size_t>(c.n));
        std::memcpy(x.data(), in.data(), in.size());
        for (cpu::isa isa : cpu::available_isas()) {
            INFO("type " << c.type << ", isa " << cpu::isa_name(isa));
            std::vector<uint8_t> got(want.size());
            cpu::quant_kernels_for(isa)[t].quantize_row(x.data(), got.data(), c.n);
            INFO(first_difference(got.data(), want.data(), want.size()));
            CHECK(got == want);
        }
        ++checked;
    }
    CHECK(checked == 4);
}
