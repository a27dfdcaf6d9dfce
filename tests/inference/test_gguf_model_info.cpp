// describe_model: model facts and memory costs computed from GGUF metadata, on the fixtures
// and on files written by the test writer with chosen hparams.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "inference/cache/kv_cache.h"
#include "inference/gguf/gguf_file.h"
#include "inference/load/model_info.h"
#include "tests/inference/gguf_writer.h"

using namespace hearth::inference;
using namespace hearth::test;
using hearth::kernels::tensor_type;

namespace {

const kv_cache_cost & kv_for(const model_info & m, const char * type) {
    for (const auto & c : m.kv_costs)
        if (c.type == type) return c;
    FAIL("no KV cost for " << type);
    return m.kv_costs.front();
}

// A qwen2-shaped model (the default model's hparams) with a 6-token vocabulary.
gguf_builder qwen_like() {
    gguf_builder g;
    g.kvs = {
        kv_string("general.architecture", "qwen2"),
        kv_u32("qwen2.context_length", 32768),
        kv_u32("qwen2.block_count", 24),
        kv_u32("qwen2.embedding_length", 896),
        kv_u32("qwen2.feed_forward_length", 4864),
        kv_u32("qwen2.attention.head_count", 14),
        kv_u32("qwen2.attention.head_count_kv", 2),
        kv_string("tokenizer.ggml.model", "gpt2"),
        kv_string("tokenizer.ggml.pre", "qwen2"),
        kv_string_array("tokenizer.ggml.tokens", {"a", "b", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|im_start|>"}),
    };
    g.tensors = {make_tensor("token_embd.weight", 8, {64, 6}), make_tensor("output_norm.weight", 0, {64})};
    return g;
}

model_info describe(const gguf_builder & g, const memory_options & o = {}) {
    static std::vector<std::vector<uint8_t>> keep;  // the file's views must outlive the call
    keep.push_back(g.build());
    auto f = gguf::gguf_file::from_memory(keep.back());
    REQUIRE(f.has_value());
    auto m = describe_model(*f, o);
    INFO((m ? std::string() : m.message()));
    REQUIRE(m.has_value());
    return *m;
}

}  // namespace

TEST_CASE("model info: stories260K Q8_0 fixture", "[inference][gguf]") {
    auto f = gguf::gguf_file::open(std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-Q8_0.gguf");
    REQUIRE(f.has_value());
    auto m = describe_model(*f);
    REQUIRE(m.has_value());
    CHECK(m->architecture == "llama");
    CHECK(m->n_params == 292800);
    CHECK(m->n_tensors == 48);
    CHECK(m->n_ctx_train == 2048);
    CHECK(m->n_layer == 5);
    CHECK(m->n_head == 8);
    CHECK(m->n_head_kv == 4);
    CHECK(m->head_dim_k == 8);
    CHECK(m->head_dim_v == 8);
    CHECK(m->n_embd == 64);
    CHECK(m->n_ff == 172);
    CHECK(m->n_vocab == 512);
    CHECK(m->tokenizer_model == "llama");
    CHECK(m->tokenizer_pre.empty());
    CHECK_FALSE(m->fim.complete());
    CHECK_FALSE(m->has_chat_template);
    CHECK(m->weights_bytes == f->tensor_data_bytes());
    // README: q8_0 for token_embd, output and the 6 attention/FFN matrices of 5 blocks; ffn_down f16; norms f32.
    REQUIRE(m->tensor_types.size() == 3);
    CHECK(m->tensor_types[0].type == "q8_0");
    CHECK(m->tensor_types[0].n_tensors == 32);
    CHECK(m->tensor_types[1].type == "f16");
    CHECK(m->tensor_types[1].n_tensors == 5);
    CHECK(m->tensor_types[1].size_bytes == 5 * 172 * 64 * 2);
    CHECK(m->tensor_types[2].type == "f32");
    CHECK(m->tensor_types[2].n_tensors == 11);
    // 5 layers x 4 KV heads x (K + V) x head size 8: f16 = 640 bytes; 8 is not a multiple of 32.
    CHECK(kv_for(*m, "f16").bytes_per_token == 640u);
    CHECK(kv_for(*m, "f16").bytes_model_ctx == 640u * 2048);
    CHECK_FALSE(kv_for(*m, "q8_0").bytes_per_token.has_value());
    CHECK(kv_for(*m, "q8_0").why_not == "head size 8 is not a multiple of 32");
    CHECK_FALSE(kv_for(*m, "q4_0").bytes_per_token.has_value());
    // The default 4096 context is capped at the model's 2048.
    CHECK(m->memory.n_ctx == 2048);
    CHECK(m->memory.kv_type == "f16");
    CHECK(m->memory.kv_bytes == 4u * 2048 * 640);
    CHECK(m->memory.total_bytes() == m->weights_bytes + m->memory.kv_bytes + m->memory.compute.total());
    CHECK(m->memory.compute.attention_scores == 8u * 2048 * 512 * 4);
    CHECK(m->memory.compute.logits == 512u * 4);
}

TEST_CASE("model info: FIM tokens and chat template from the vocabulary fixtures", "[inference][gguf]") {
    struct want {
        const char * file;
        bool fim;
        uint32_t pre, suf, mid;
        bool chat;
        const char * fim_format;
        const char * fim_why;   // the start of the reason
    };
    const want wants[] = {
        {"deepseek-coder", true, 32016, 32015, 32017, false, "deepseek", "token texts <\xef\xbd\x9c" "fim"},
        {"starcoder", true, 1, 3, 2, false, "starcoder", "token texts <fim_prefix>, <fim_suffix>, <fim_middle>: StarCoder's"},
        {"llama-spm", false, 0, 0, 0, false, "none", "no prefix, suffix and middle tokens"},
        {"gpt-2", false, 0, 0, 0, false, "none", "no prefix, suffix and middle tokens"},
        {"phi-3", false, 0, 0, 0, true, "none", "no prefix, suffix and middle tokens"},
    };
    for (const auto & w : wants) {
        INFO(w.file);
        auto f = gguf::gguf_file::open(std::string(HEARTH_FIXTURES_DIR) + "/tokenizer/ggml-vocab-" + w.file + ".gguf");
        REQUIRE(f.has_value());
        auto m = describe_model(*f);
        REQUIRE(m.has_value());
        CHECK(m->n_params == 0);
        CHECK(m->fim.complete() == w.fim);
        if (w.fim) {
            CHECK(m->fim.source == "token texts");
            CHECK(m->fim.prefix->id == w.pre);
            CHECK(m->fim.suffix->id == w.suf);
            CHECK(m->fim.middle->id == w.mid);
        }
        CHECK(m->has_chat_template == w.chat);
        CHECK(m->fim_format == w.fim_format);
        CHECK_THAT(m->fim_format_reason, Catch::Matchers::StartsWith(w.fim_why));
    }
}

TEST_CASE("model info: the RAM estimate assumes the daemon's default cache type", "[inference][gguf]") {
    CHECK(kv_types_name(memory_options{}.kv_type) == k_default_cache_type);
}

TEST_CASE("model info: KV cache and peak RAM for a qwen2-shaped model", "[inference][gguf]") {
    memory_options o;
    o.n_ctx = 4096;
    o.n_files = 3;
    o.kv_type = tensor_type::q8_0;
    const model_info m = describe(qwen_like(), o);
    CHECK(m.head_dim_k == 64);  // 896 / 14, no key_length key
    CHECK(m.n_vocab == 6);
    CHECK(m.fim.complete());
    CHECK(m.fim.source == "token texts");
    CHECK(m.fim.prefix->id == 2);
    CHECK(m.fim.middle->id == 3);
    CHECK(m.fim.suffix->id == 4);
    // 24 layers x 2 KV heads x (K row + V row) of 64 values.
    CHECK(kv_for(m, "f16").bytes_per_token == 24u * 2 * 2 * 64 * 2);
    CHECK(kv_for(m, "q8_0").bytes_per_token == 24u * 2 * 2 * (2 * 34));
    CHECK(kv_for(m, "f16/q8_0").bytes_per_token == 24u * 2 * (64 * 2 + 2 * 34));   // K f16, V q8_0
    CHECK(kv_for(m, "q4_0").bytes_per_token == 24u * 2 * 2 * (2 * 18));
    CHECK(kv_for(m, "q8_0").bytes_model_ctx == 24u * 2 * 2 * (2 * 34) * 32768);
    CHECK(m.memory.kv_type == "q8_0");
    CHECK(m.memory.n_ctx == 4096);
    CHECK(m.memory.kv_bytes == 3u * 4096 * 6528);
    CHECK(m.memory.compute.attention_scores == 14u * 4096 * 512 * 4);
    CHECK(m.memory.weights_bytes == 6 * 2 * 34 + 64 * 4);
    CHECK(m.notes.empty());
}

TEST_CASE("model info: the q8_0/f16 pair's cost, and which rows store a smoothed K", "[inference][gguf][k_smoothing]") {
    // Without K biases no row is smoothed; with them every quantized K is (k_smoothing.h), unless
    // a norm follows the bias (qwen3's attn_k_norm), which leaves the bias no say.
    gguf_builder g = qwen_like();
    const model_info plain = describe(g);
    CHECK(kv_for(plain, "q8_0/f16").bytes_per_token == 24u * 2 * (2 * 34 + 64 * 2));   // K q8_0, V f16
    for (const auto & c : plain.kv_costs) CHECK_FALSE(c.k_smoothed);
    g.tensors.push_back(make_tensor("blk.0.attn_k.bias", 0, {128}));
    const model_info biased = describe(g);
    for (const auto & c : biased.kv_costs) {
        INFO(c.type);
        CHECK(c.k_smoothed == (c.type.starts_with("q8_0") || c.type.starts_with("q4_0")));
    }
    g.tensors.push_back(make_tensor("blk.0.attn_k_norm.weight", 0, {64}));
    for (const auto & c : describe(g).kv_costs) CHECK_FALSE(c.k_smoothed);
}

TEST_CASE("model info: FIM ids from metadata, key/value head sizes, per-layer hparams", "[inference][gguf]") {
    gguf_builder g = qwen_like();
    g.kvs.push_back(kv_u32("tokenizer.ggml.fim_pre_token_id", 0));
    g.kvs.push_back(kv_u32("tokenizer.ggml.fim_suf_token_id", 1));
    g.kvs.push_back(kv_u32("tokenizer.ggml.fim_mid_token_id", 5));
    g.kvs.push_back(kv_string("tokenizer.chat_template", "{{ messages }}"));
    g.kvs.push_back(kv_u32("qwen2.attention.key_length", 192));
    g.kvs.push_back(kv_u32("qwen2.attention.value_length", 128));
    g.kvs[6] = kv_i32_array("qwen2.attention.head_count_kv", {2, 4, 2});  // per layer: the largest counts
    const model_info m = describe(g);
    CHECK(m.fim.source == "metadata");
    CHECK(m.fim.prefix->id == 0);
    CHECK(m.fim.suffix->id == 1);
    CHECK(m.fim.middle->text == "<|im_start|>");
    CHECK(m.has_chat_template);
    CHECK(m.chat_template_bytes == 14);
    CHECK(m.n_head_kv == 4);
    CHECK(m.head_dim_k == 192);
    CHECK(m.head_dim_v == 128);
    CHECK(kv_for(m, "f16").bytes_per_token == 24u * 4 * (192 + 128) * 2);
    CHECK(kv_for(m, "q8_0").bytes_per_token == 24u * 4 * (6 + 4) * 34);
}

TEST_CASE("model info: odd metadata is described, not trusted", "[inference][gguf]") {
    SECTION("FIM id outside the vocabulary falls back to token texts") {
        gguf_builder g = qwen_like();
        g.kvs.push_back(kv_u32("tokenizer.ggml.fim_pre_token_id", 600000));
        g.kvs.push_back(kv_u32("tokenizer.ggml.fim_suf_token_id", 1));
        g.kvs.push_back(kv_u32("tokenizer.ggml.fim_mid_token_id", 1));
        const model_info m = describe(g);
        CHECK(m.fim.source == "token texts");
        REQUIRE(m.notes.size() == 1);
        CHECK(m.notes[0].find("600000 is outside the vocabulary of 6 tokens") != std::string::npos);
    }
    SECTION("head size not a multiple of 32: q8_0 cache falls back to f16") {
        gguf_builder g = qwen_like();
        g.kvs[5] = kv_u32("qwen2.attention.head_count", 16);  // 896 / 16 = 56
        const model_info m = describe(g);
        CHECK(m.head_dim_k == 56);
        CHECK(kv_for(m, "q8_0").why_not == "head size 56 is not a multiple of 32");
        CHECK(m.memory.kv_type == "f16");
        memory_options o;
        o.kv_type = tensor_type::q8_0;
        const model_info asked_q8 = describe(g, o);
        CHECK(asked_q8.memory.kv_type == "f16");
        CHECK(asked_q8.memory.kv_bytes == m.memory.kv_bytes);
        REQUIRE_FALSE(asked_q8.notes.empty());
        CHECK(asked_q8.notes.back().find("cannot hold this model's heads") != std::string::npos);
        CHECK(m.memory.kv_bytes == 4u * 4096 * (24 * 2 * 2 * 56 * 2));
    }
    SECTION("missing hparams are noted and leave the KV cost unknown") {
        gguf_builder g = qwen_like();
        g.kvs.resize(1);  // architecture only
        const model_info m = describe(g);
        CHECK(m.n_layer == 0);
        CHECK(m.n_vocab == 6);  // from token_embd's shape
        CHECK_FALSE(kv_for(m, "f16").bytes_per_token.has_value());
        CHECK(kv_for(m, "f16").why_not == "head size unknown");
        CHECK(m.memory.kv_bytes == 0);
        CHECK(m.notes.size() >= 4);
    }
    SECTION("absurd hparams saturate instead of wrapping") {
        gguf_builder g = qwen_like();
        g.kvs[2] = kv_u64("qwen2.block_count", uint64_t{1} << 62);
        const model_info m = describe(g);
        CHECK(kv_for(m, "f16").bytes_per_token == UINT64_MAX);
    }
    SECTION("context capped at the model's") {
        memory_options o;
        o.n_ctx = 1 << 20;
        CHECK(describe(qwen_like(), o).memory.n_ctx == 32768);
    }
}

TEST_CASE("model info: wrongly typed hparams are errors naming the key", "[inference][gguf]") {
    gguf_builder g = qwen_like();
    g.kvs[2] = kv_string("qwen2.block_count", "24");
    const auto bytes = g.build();
    auto f = gguf::gguf_file::from_memory(bytes);
    REQUIRE(f.has_value());
    auto m = describe_model(*f);
    REQUIRE_FALSE(m.has_value());
    CHECK(m.message() == "metadata 'qwen2.block_count' has type string, expected an integer");

    gguf_builder no_arch = qwen_like();
    no_arch.kvs.erase(no_arch.kvs.begin());
    const auto bytes2 = no_arch.build();
    auto f2 = gguf::gguf_file::from_memory(bytes2);
    REQUIRE(f2.has_value());
    auto m2 = describe_model(*f2);
    REQUIRE_FALSE(m2.has_value());
    CHECK(m2.message().find("no general.architecture") != std::string::npos);
}
