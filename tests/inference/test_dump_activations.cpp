// Not a check: writes our engine's intermediate activations for one golden prompt as .npy
// files named like llama.cpp's graph tensors, for tests/golden/compare_dumps.py to put next to
// what tests/golden/dump_llamacpp.py writes. Hidden; run it by name, with the environment
//   HEARTH_DEFAULT_MODEL   the model
//   HEARTH_DUMP_DIR        where the .npy files go
//   HEARTH_DUMP_CASE       the golden prompt (default fim_go_goroutine)
//   HEARTH_DUMP_GOLDEN     the completions.json it is in (default the default model's)
//   HEARTH_DUMP_NAMES      write only these tensors (comma-separated names with the layer,
//                          e.g. "kqv_out-0,l_out-17"; default all; logits_last always)
//   HEARTH_DUMP_CACHE      f16 (default) or q8_0
//   HEARTH_DUMP_INJECT     a dump_llamacpp.py directory: each step's output is written, then
//                          replaced by llama.cpp's, so every step starts from llama.cpp's inputs
//                          and its difference is that step's alone
//   HEARTH_DUMP_STEPS      then decode this many of the case's generated tokens one at a time,
//                          each step in step1/, step2/, ... (of both directories)
//   HEARTH_DUMP_INJECT_ONLY  with HEARTH_DUMP_INJECT: replace only these steps (comma-separated
//                          names without the layer, e.g. "ffn_out,kqv_out")
// as in: build/tests/hearth_test_inference "[dump]"
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "inference/forward/engine.h"
#include "tests/inference/golden_util.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;

namespace {

// A [n_rows][width] float32 array in numpy's .npy format (version 1.0).
void write_npy(const std::string & path, const float * data, int32_t n_rows, int32_t width) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(n_rows) + ", " +
                         std::to_string(width) + "), }";
    header.append(63 - (10 + header.size()) % 64, ' ');  // pad so the data starts 64-aligned
    header.push_back('\n');
    FILE * f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    const uint16_t header_len = static_cast<uint16_t>(header.size());
    std::fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    std::fwrite(&header_len, 2, 1, f);  // little-endian on every machine we build for
    std::fwrite(header.data(), 1, header.size(), f);
    std::fwrite(data, sizeof(float), static_cast<size_t>(n_rows) * width, f);
    std::fclose(f);
}

// Reads a float32 .npy of exactly n floats into data; false when the file is absent.
bool read_npy(const std::string & path, float * data, size_t n) {
    FILE * f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    char magic[10];
    REQUIRE(std::fread(magic, 1, 10, f) == 10);
    REQUIRE(std::memcmp(magic, "\x93NUMPY\x01\x00", 8) == 0);
    uint16_t header_len = 0;
    std::memcpy(&header_len, magic + 8, 2);
    std::string header(header_len, '\0');
    REQUIRE(std::fread(header.data(), 1, header_len, f) == header_len);
    INFO(path << ": " << header);
    REQUIRE(header.find("'<f4'") != std::string::npos);
    REQUIRE(std::fread(data, sizeof(float), n, f) == n);
    REQUIRE(std::fgetc(f) == EOF);
    std::fclose(f);
    return true;
}

// Our step name -> the name llama.cpp's callback sees for the same tensor; a #k suffix is the
// k-th tensor of that name in its graph (Qcur-0#2 is after the bias add, #4 after RoPE).
std::string llamacpp_name(std::string_view name, int32_t il) {
    static const std::map<std::string_view, std::pair<std::string_view, std::string_view>> later_steps = {
        {"Qcur_bias", {"Qcur", "#2"}}, {"Kcur_bias", {"Kcur", "#2"}}, {"Vcur_bias", {"Vcur", "#2"}},
        {"Qcur_rope", {"Qcur", "#4"}}, {"Kcur_rope", {"Kcur", "#4"}},
    };
    std::string base(name), suffix;
    if (auto it = later_steps.find(name); it != later_steps.end()) {
        base = it->second.first;
        suffix = it->second.second;
    }
    return il < 0 ? base : base + "-" + std::to_string(il) + suffix;
}

}  // namespace

TEST_CASE("dump intermediate activations for one golden prompt", "[.][dump]") {
    const char * model_path = std::getenv("HEARTH_DEFAULT_MODEL");
    const char * dir = std::getenv("HEARTH_DUMP_DIR");
    REQUIRE(model_path);
    REQUIRE(dir);
    const char * case_env = std::getenv("HEARTH_DUMP_CASE");
    const std::string case_name = case_env ? case_env : "fim_go_goroutine";
    const char * cache_env = std::getenv("HEARTH_DUMP_CACHE");
    const auto cache_type = cache_env && std::string(cache_env) == "q8_0" ? kernels::tensor_type::q8_0
                                                                          : kernels::tensor_type::f16;

    auto tm = load_test_model(model_path);
    kernels::thread_pool pool(2);
    engine eng(tm.mdl, pool, 512);  // llama.cpp's golden run: the whole prompt in one batch
    const char * golden_env = std::getenv("HEARTH_DUMP_GOLDEN");
    const auto golden = read_json_file(golden_env ? std::string(golden_env)
                                                  : std::string(HEARTH_SOURCE_DIR) +
                                                        "/tests/golden/qwen2.5-coder-0.5b-instruct-q4_k_m/completions.json");
    const char * names_env = std::getenv("HEARTH_DUMP_NAMES");
    const std::string names = names_env ? "," + std::string(names_env) + "," : "";
    std::vector<int32_t> prompt, generated;
    for (const auto & r : golden.at("results").as_array())
        if (r.at("name").as_string() == case_name) {
            prompt = json_ids(r.at("prompt_tokens"));
            generated = json_ids(r.at("generated_tokens"));
        }
    REQUIRE(!prompt.empty());
    const char * steps_env = std::getenv("HEARTH_DUMP_STEPS");
    const size_t n_steps = std::min<size_t>(steps_env ? std::stoul(steps_env) : 0, generated.size());
    std::string step_dir;   // "" for the prompt, then "/step1", ...

    const char * inject = std::getenv("HEARTH_DUMP_INJECT");
    const char * only_env = std::getenv("HEARTH_DUMP_INJECT_ONLY");
    const std::string only = only_env ? "," + std::string(only_env) + "," : "";
    eng.set_observer([&](std::string_view name, int32_t il, float * data, int32_t n_tokens, int32_t width) {
        const std::string tensor = llamacpp_name(name, il);
        const std::string file = step_dir + "/" + tensor + ".npy";
        if (names.empty() || names.find("," + tensor + ",") != std::string::npos)
            write_npy(std::string(dir) + file, data, n_tokens, width);
        if (inject && (only.empty() || only.find("," + std::string(name) + ",") != std::string::npos))
            read_npy(std::string(inject) + file, data, static_cast<size_t>(n_tokens) * width);
    });
    auto cache = eng.make_cache(cache_type, 2048);
    std::vector<float> logits;
    REQUIRE(eng.eval(cache, prompt, logits, true).has_value());
    const size_t n_vocab = static_cast<size_t>(tm.mdl.hp().n_vocab);
    write_npy(std::string(dir) + "/logits_last.npy", logits.data() + (prompt.size() - 1) * n_vocab, 1,
              static_cast<int32_t>(n_vocab));
    for (size_t k = 1; k <= n_steps; ++k) {
        step_dir = "/step" + std::to_string(k);
        std::filesystem::create_directories(std::string(dir) + step_dir);
        const int32_t tok = generated[k - 1];
        REQUIRE(eng.eval(cache, std::span<const int32_t>(&tok, 1), logits).has_value());
        write_npy(std::string(dir) + step_dir + "/logits_last.npy", logits.data(), 1, static_cast<int32_t>(n_vocab));
    }
}
