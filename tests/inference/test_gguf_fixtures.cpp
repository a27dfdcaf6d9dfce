// Facts about the fixture files (fixtures/README.md) as our reader sees them: the tiny
// llama model in four encodings and the five vocabulary-only files.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "inference/gguf/gguf_file.h"

namespace fs = std::filesystem;
using namespace hearth::inference::gguf;
using hearth::kernels::tensor_type;

namespace {

std::string model_path(const std::string & enc) {
    return std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-" + enc + ".gguf";
}

uint64_t want_uint(const gguf_file & f, const char * key) {
    auto v = f.get_uint(key);
    REQUIRE(v.has_value());
    REQUIRE(v->has_value());
    return **v;
}

// The README's table: which type each weight has in each encoding.
tensor_type expected_type(const std::string & enc, const std::string & name) {
    const bool norm = name.find("norm") != std::string::npos;
    if (enc == "F32" || norm) return tensor_type::f32;
    if (enc == "F16") return tensor_type::f16;
    if (name.find("ffn_down") != std::string::npos) return tensor_type::f16;
    if (enc == "Q8_0") return tensor_type::q8_0;
    if (name == "output.weight") return tensor_type::q8_0;  // Q6_K fell back to Q8_0 (rows of 64)
    return tensor_type::q4_0;
}

}  // namespace

TEST_CASE("gguf: stories260K fixtures have the README's shapes, types and hparams", "[inference][gguf]") {
    const std::map<std::string, uint64_t> file_bytes = {
        {"F32", 1185376}, {"F16", 601248}, {"Q8_0", 379168}, {"Q4_0", 277024}};
    for (const auto & [enc, bytes] : file_bytes) {
        INFO("stories260K-" << enc);
        auto opened = gguf_file::open(model_path(enc));
        REQUIRE(opened.has_value());
        const gguf_file & f = *opened;
        CHECK(f.file_size() == bytes);
        CHECK(f.version() == 3);
        CHECK(f.alignment() == 32);
        CHECK(f.find("general.alignment") == nullptr);
        CHECK(f.get_string("general.architecture").value() == "llama");
        CHECK(want_uint(f, "llama.block_count") == 5);
        CHECK(want_uint(f, "llama.embedding_length") == 64);
        CHECK(want_uint(f, "llama.feed_forward_length") == 172);
        CHECK(want_uint(f, "llama.attention.head_count") == 8);
        CHECK(want_uint(f, "llama.attention.head_count_kv") == 4);
        CHECK(want_uint(f, "llama.rope.dimension_count") == 8);
        CHECK(want_uint(f, "llama.context_length") == 2048);
        CHECK(f.find("llama.rope.freq_base") == nullptr);
        CHECK(f.get_float("llama.attention.layer_norm_rms_epsilon").value().value() == Approx(1e-5).epsilon(1e-6));
        CHECK(f.get_string("tokenizer.ggml.model").value() == "llama");
        CHECK(f.get_string_array("tokenizer.ggml.tokens").value()->size() == 512);
        CHECK(f.get_f32_array("tokenizer.ggml.scores").value()->size() == 512);
        CHECK(f.get_int_array("tokenizer.ggml.token_type").value()->size() == 512);
        CHECK(f.get_string_array("tokenizer.ggml.tokens").value()->operator[](3) == "<0x00>");
        CHECK(want_uint(f, "tokenizer.ggml.unknown_token_id") == 0);
        CHECK(want_uint(f, "tokenizer.ggml.bos_token_id") == 1);
        CHECK(want_uint(f, "tokenizer.ggml.eos_token_id") == 2);
        CHECK(want_uint(f, "tokenizer.ggml.seperator_token_id") == 4294967295u);
        CHECK(f.find("tokenizer.ggml.add_bos_token") == nullptr);

        REQUIRE(f.tensors().size() == 48);
        const std::map<std::string, std::array<int64_t, 2>> block_shapes = {
            {"attn_norm", {64, 1}}, {"attn_q", {64, 64}}, {"attn_k", {64, 32}}, {"attn_v", {64, 32}},
            {"attn_output", {64, 64}}, {"ffn_norm", {64, 1}}, {"ffn_gate", {64, 172}}, {"ffn_up", {64, 172}},
            {"ffn_down", {172, 64}}};
        std::map<std::string, std::array<int64_t, 2>> want = {
            {"token_embd.weight", {64, 512}}, {"output_norm.weight", {64, 1}}, {"output.weight", {64, 512}}};
        for (int b = 0; b < 5; ++b)
            for (const auto & [name, shape] : block_shapes) want["blk." + std::to_string(b) + "." + name + ".weight"] = shape;
        REQUIRE(want.size() == 48);
        uint64_t n_params = 0;
        uint64_t sum_bytes = 0;
        for (const auto & [name, shape] : want) {
            INFO("tensor " << name);
            const tensor_info * t = f.find_tensor(name);
            REQUIRE(t);
            CHECK(t->n_dims == (shape[1] == 1 ? 1u : 2u));
            CHECK(t->ne[0] == shape[0]);
            CHECK(t->ne[1] == shape[1]);
            CHECK(t->type == expected_type(enc, name));
            const auto & traits = hearth::kernels::tensor_type_info(t->type);
            CHECK(t->size_bytes == static_cast<uint64_t>(shape[0] * shape[1] / traits.block_size) * traits.type_size);
            CHECK(t->row_bytes() * static_cast<uint64_t>(shape[1]) == t->size_bytes);
            CHECK(reinterpret_cast<uintptr_t>(t->data) % 32 == 0);
            n_params += static_cast<uint64_t>(t->n_elements());
            sum_bytes += t->size_bytes;
        }
        CHECK(n_params == 292800);
        CHECK(f.tensor_data_bytes() == sum_bytes);
        CHECK(f.data_offset() + f.tensor_data_bytes() <= f.file_size());
        if (enc == "F32") CHECK(f.tensor_data_bytes() == 4 * 292800);

        // output.weight holds the same values as token_embd (README); where both are stored
        // in the same type their bytes must match, which checks the data pointers.
        const tensor_info * embd = f.find_tensor("token_embd.weight");
        const tensor_info * out = f.find_tensor("output.weight");
        if (embd->type == out->type) CHECK(std::memcmp(embd->data, out->data, embd->size_bytes) == 0);
    }
}

TEST_CASE("gguf: F32 fixture norm weights are plain floats at the right place", "[inference][gguf]") {
    auto f32 = gguf_file::open(model_path("F32"));
    auto f16 = gguf_file::open(model_path("F16"));
    REQUIRE(f32.has_value());
    REQUIRE(f16.has_value());
    // F16 keeps norms in F32, so the same tensor must hold identical bytes in both files.
    for (const char * name : {"output_norm.weight", "blk.0.attn_norm.weight", "blk.4.ffn_norm.weight"}) {
        INFO(name);
        const tensor_info * a = f32->find_tensor(name);
        const tensor_info * b = f16->find_tensor(name);
        REQUIRE(a);
        REQUIRE(b);
        REQUIRE(a->size_bytes == 256);
        CHECK(std::memcmp(a->data, b->data, 256) == 0);
        float first;
        std::memcpy(&first, a->data, 4);
        CHECK(std::isfinite(first));
        CHECK(first != 0.0f);
    }
}

TEST_CASE("gguf: vocabulary-only fixtures", "[inference][gguf]") {
    struct vocab {
        const char * file;
        const char * arch;
        const char * model;
        const char * pre;
        size_t n_tokens;
        size_t n_merges;  // 0: no merges key
    };
    const vocab vocabs[] = {
        {"llama-spm", "llama", "llama", "default", 32000, 0},
        {"phi-3", "phi3", "llama", "default", 32064, 0},
        {"gpt-2", "gpt2", "gpt2", "gpt-2", 50257, 50000},
        {"starcoder", "starcoder2", "gpt2", "starcoder", 49152, 48872},
        {"deepseek-coder", "llama", "gpt2", "deepseek-coder", 32256, 31757},
    };
    for (const auto & v : vocabs) {
        INFO(v.file);
        auto f = gguf_file::open(std::string(HEARTH_FIXTURES_DIR) + "/tokenizer/ggml-vocab-" + v.file + ".gguf");
        REQUIRE(f.has_value());
        CHECK(f->tensors().empty());
        CHECK(f->tensor_data_bytes() == 0);
        CHECK(f->get_string("general.architecture").value() == v.arch);
        CHECK(f->get_string("tokenizer.ggml.model").value() == v.model);
        CHECK(f->get_string("tokenizer.ggml.pre").value() == v.pre);
        CHECK(f->get_string_array("tokenizer.ggml.tokens").value()->size() == v.n_tokens);
        auto merges = f->get_string_array("tokenizer.ggml.merges");
        REQUIRE(merges.has_value());
        CHECK((*merges ? (*merges)->size() : 0) == v.n_merges);
    }
}
