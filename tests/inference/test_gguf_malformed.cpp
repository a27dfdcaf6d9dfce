// Malformed GGUF files, one per validation rule: each is refused with an error that names
// the problem and where it is, never a crash. The files are written byte by byte with the
// test writer so each defect is explicit.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "inference/gguf/gguf_file.h"
#include "tests/inference/gguf_writer.h"

using hearth::inference::gguf::gguf_file;
using namespace hearth::test;

namespace {

gguf_builder valid_builder() {
    gguf_builder g;
    g.kvs = {
        kv_string("general.architecture", "llama"),
        kv_string_array("tokenizer.ggml.tokens", {"<unk>", "a", "b"}),
        kv_f32_array("tokenizer.ggml.scores", {0.f, -1.f, -2.f}),
        kv_i32_array("tokenizer.ggml.token_type", {2, 1, 1}),
    };
    g.tensors = {
        make_tensor("a", 0, {8, 2}),   // f32, 64 bytes
        make_tensor("b", 8, {32, 1}),  // q8_0, 34 bytes
        make_tensor("c", 1, {3}),      // f16, 6 bytes
    };
    return g;
}

struct bad_case {
    std::string rule;
    std::function<std::vector<uint8_t>()> make;
    std::vector<std::string> fragments;  // every one must appear in the error
};

std::vector<uint8_t> with(const std::function<void(gguf_builder &)> & edit) {
    gguf_builder g = valid_builder();
    edit(g);
    return g.build();
}

template <class T>
std::vector<uint8_t> patched(std::vector<uint8_t> b, size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof(T));
    return b;
}

constexpr uint64_t k_u64_max = std::numeric_limits<uint64_t>::max();

std::vector<bad_case> bad_cases() {
    return {
        {"empty input", [] { return std::vector<uint8_t>{}; }, {"at offset 0", "bad magic"}},
        {"bad magic", [] { return with([](gguf_builder & g) { g.magic[3] = 'L'; }); }, {"at offset 0", "bad magic"}},
        {"header cut short", [] { auto b = valid_builder().build(); b.resize(20); return b; },
         {"truncated file", "header"}},
        {"version 1 refused", [] { return with([](gguf_builder & g) { g.version = 1; }); },
         {"at offset 4", "version 1 is not supported"}},
        {"unknown version", [] { return with([](gguf_builder & g) { g.version = 4; }); },
         {"at offset 4", "unsupported GGUF version 4", "expected 2 or 3"}},
        {"big-endian file", [] { return with([](gguf_builder & g) { g.version = 0x03000000; }); },
         {"big-endian"}},
        {"tensor count beyond the file", [] { return with([](gguf_builder & g) { g.n_tensors = uint64_t{1} << 60; }); },
         {"at offset 8", "tensor count 1152921504606846976 exceeds"}},
        {"metadata count beyond the file", [] { return with([](gguf_builder & g) { g.n_kv = k_u64_max; }); },
         {"at offset 16", "metadata count 18446744073709551615 exceeds"}},
        {"tensor count beyond the bytes left after the metadata",
         [] { return with([](gguf_builder & g) { g.n_tensors = 10; }); }, {"tensor count 10 exceeds what the"}},
        {"one metadata entry more than written",
         [] { return with([](gguf_builder & g) { g.tensors.clear(); g.n_kv = g.kvs.size() + 1; }); },
         {"truncated file", "metadata entry 4 key"}},
        {"key longer than the limit",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_u32(std::string(65536, 'k'), 1)); }); },
         {"metadata entry 4 key", "length 65536 exceeds the limit of 65535"}},
        {"key length past the end", [] { auto b = valid_builder().build(); return patched<uint64_t>(b, 24, 60000); },
         {"at offset 24", "length 60000 runs past the end"}},
        {"empty key", [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_u32("", 1)); }); }, {"empty key"}},
        {"string value past the end",
         [] { return with([](gguf_builder & g) { g.tensors.clear(); g.kvs.push_back(kv_raw("s", byte_sink{}.u32(t_string).u64(100).b)); }); },
         {"metadata 's'", "length 100 runs past the end"}},
        {"unknown value type",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_raw("x", byte_sink{}.u32(13).u32(0).b)); }); },
         {"metadata 'x'", "unknown value type 13"}},
        {"array of arrays",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_raw("x", byte_sink{}.u32(t_array).u32(t_array).u64(1).u32(t_u8).u64(0).b)); }); },
         {"metadata 'x'", "arrays of arrays"}},
        {"unknown array element type",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_raw("x", byte_sink{}.u32(t_array).u32(99).u64(0).b)); }); },
         {"unknown array element type 99"}},
        {"array byte size overflows",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_raw("x", byte_sink{}.u32(t_array).u32(t_u64).u64(uint64_t{1} << 62).b)); }); },
         {"metadata 'x'", "overflow 64 bits"}},
        {"array past the end",
         [] { return with([](gguf_builder & g) { g.tensors.clear(); g.kvs.push_back(kv_raw("x", byte_sink{}.u32(t_array).u32(t_u32).u64(1000).u32(7).b)); }); },
         {"metadata 'x'", "1000 u32 elements (4000 bytes) run past the end"}},
        {"string array count beyond the file",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_raw("x", byte_sink{}.u32(t_array).u32(t_string).u64(uint64_t{1} << 40).b)); }); },
         {"metadata 'x'", "1099511627776 strings cannot fit"}},
        {"bool that is not 0 or 1",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_raw("flag", byte_sink{}.u32(t_bool).u8(2).b)); }); },
         {"metadata 'flag'", "bool value 2, expected 0 or 1"}},
        {"duplicate key",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_string("general.architecture", "qwen2")); }); },
         {"duplicate metadata key 'general.architecture'"}},
        {"general.alignment not u32",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_u64("general.alignment", 32)); }); },
         {"'general.alignment' has type u64, expected u32"}},
        {"general.alignment not a power of two",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_u32("general.alignment", 48)); }); },
         {"general.alignment is 48, expected a power of two"}},
        {"general.alignment zero",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_u32("general.alignment", 0)); }); },
         {"general.alignment is 0"}},
        {"general.alignment too large",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_u32("general.alignment", 1u << 21)); }); },
         {"general.alignment is 2097152", "1048576"}},
        {"tokenizer.ggml.scores not f32[]",
         [] { return with([](gguf_builder & g) { g.kvs[2] = kv_i32_array("tokenizer.ggml.scores", {0, 1, 2}); }); },
         {"'tokenizer.ggml.scores' has type array[i32], expected array[f32]"}},
        {"tokenizer.ggml.tokens not string[]",
         [] { return with([](gguf_builder & g) { g.kvs[1] = kv_string("tokenizer.ggml.tokens", "abc"); }); },
         {"'tokenizer.ggml.tokens' has type string, expected array[string]"}},
        {"tokenizer.ggml.token_type not i32[]",
         [] { return with([](gguf_builder & g) { g.kvs[3] = kv_f32_array("tokenizer.ggml.token_type", {1, 1, 1}); }); },
         {"'tokenizer.ggml.token_type' has type array[f32], expected array[i32]"}},
        {"tokenizer.ggml.merges not string[]",
         [] { return with([](gguf_builder & g) { g.kvs.push_back(kv_i32_array("tokenizer.ggml.merges", {1})); }); },
         {"'tokenizer.ggml.merges' has type array[i32], expected array[string]"}},
        {"general.architecture not a string",
         [] { return with([](gguf_builder & g) { g.kvs[0] = kv_u32("general.architecture", 1); }); },
         {"'general.architecture' has type u32, expected string"}},
        {"scores not one per token",
         [] { return with([](gguf_builder & g) { g.kvs[2] = kv_f32_array("tokenizer.ggml.scores", {0.f, 1.f}); }); },
         {"'tokenizer.ggml.scores' has 2 elements, expected one per token (3)"}},
        {"n_dims 0", [] { return with([](gguf_builder & g) { g.tensors[0].n_dims = 0; g.tensors[0].ne = {}; }); },
         {"tensor 'a'", "n_dims 0, expected 1..4"}},
        {"n_dims 5", [] { return with([](gguf_builder & g) { g.tensors[0].ne = {8, 1, 1, 1, 2}; }); },
         {"tensor 'a'", "n_dims 5, expected 1..4"}},
        {"zero dimension", [] { return with([](gguf_builder & g) { g.tensors[0].ne = {8, 0}; }); },
         {"tensor 'a'", "dimension 1 is 0, expected > 0"}},
        {"negative dimension", [] { return with([](gguf_builder & g) { g.tensors[0].ne = {-8, 2}; }); },
         {"tensor 'a'", "dimension 0 is -8"}},
        {"element count overflows",
         [] { return with([](gguf_builder & g) { g.tensors[0].ne = {int64_t{1} << 32, int64_t{1} << 32}; }); },
         {"tensor 'a'", "element count overflows 64 bits"}},
        {"byte size overflows",
         [] { return with([](gguf_builder & g) { g.tensors[0].type = 28; g.tensors[0].ne = {int64_t{1} << 61, 2}; }); },
         {"tensor 'a'", "byte size overflows 64 bits"}},
        {"row not a multiple of the block size",
         [] { return with([](gguf_builder & g) { g.tensors[1].ne = {48, 1}; }); },
         {"tensor 'b'", "ne[0] = 48 is not a multiple of q8_0's block size 32"}},
        {"removed tensor type (q4_2)", [] { return with([](gguf_builder & g) { g.tensors[0].type = 4; }); },
         {"tensor 'a'", "unknown or removed tensor type id 4"}},
        {"removed tensor type (q4_0_4_4)", [] { return with([](gguf_builder & g) { g.tensors[0].type = 31; }); },
         {"unknown or removed tensor type id 31"}},
        {"unknown tensor type", [] { return with([](gguf_builder & g) { g.tensors[2].type = 1000; }); },
         {"tensor 'c'", "unknown or removed tensor type id 1000"}},
        {"tensor offset not aligned",
         [] { return with([](gguf_builder & g) { g.tensors[1].offset = 72; }); },
         {"tensor 'b'", "data offset 72 leaves a gap; expected 64"}},
        {"first tensor not at 0", [] { return with([](gguf_builder & g) { g.tensors[0].offset = 32; }); },
         {"tensor 'a'", "data offset 32 leaves a gap; expected 0"}},
        {"overlapping tensors", [] { return with([](gguf_builder & g) { g.tensors[2].offset = 64; }); },
         {"overlaps tensor"}},
        {"offset that would wrap the padding",
         [] { return with([](gguf_builder & g) { g.tensors[2].offset = k_u64_max - 3; }); },
         {"tensor 'c'", "leaves a gap"}},
        {"tensor past the end of the file",
         [] { auto b = valid_builder().build(); b.resize(b.size() - 40); return b; },
         {"tensor 'c'", "runs past the end of the file"}},
        {"data section past the end of the file",
         [] {
             gguf_builder g = valid_builder();
             auto b = g.build();
             const uint64_t data_start = b.size() - 96 - 32 - 32;  // a: 64, b: 34 -> 64, c: 6 -> 32
             b.resize(data_start - 1);
             return b;
         },
         {"data section starts past the end of the file"}},
        {"duplicate tensor name", [] { return with([](gguf_builder & g) { g.tensors[2].name = g.tensors[0].name; }); },
         {"duplicate tensor name 'a'"}},
        {"tensor name too long", [] { return with([](gguf_builder & g) { g.tensors[2].name = std::string(64, 'n'); }); },
         {"name of tensor 2", "length 64 exceeds the limit of 63"}},
        {"empty tensor name", [] { return with([](gguf_builder & g) { g.tensors[1].name = ""; }); },
         {"tensor 1 has an empty name"}},
    };
}

}  // namespace

TEST_CASE("gguf: the test writer's base file is valid", "[inference][gguf]") {
    const auto bytes = valid_builder().build();
    auto f = gguf_file::from_memory(bytes);
    REQUIRE(f.has_value());
    CHECK(f->tensors().size() == 3);
    CHECK(f->metadata().size() == 4);
    CHECK(f->tensor_data_bytes() == 64 + 34 + 6);
    const auto * b = f->find_tensor("b");
    REQUIRE(b);
    CHECK(b->offset == 64);
    CHECK(b->data[0] == 2);  // the writer fills tensor i with i + 1
    CHECK(b->data[33] == 2);
    CHECK(f->find_tensor("c")->offset == 128);
}

TEST_CASE("gguf: every malformed file is refused with its reason", "[inference][gguf]") {
    for (const auto & c : bad_cases()) {
        INFO("rule: " << c.rule);
        const std::vector<uint8_t> bytes = c.make();
        auto f = gguf_file::from_memory(bytes);
        CHECK_FALSE(f.has_value());
        if (f.has_value()) continue;  // reported above; go on with the other rules
        INFO("error: " << f.message());
        CHECK(f.message().find("at offset ") != std::string::npos);
        for (const auto & frag : c.fragments) CHECK(f.message().find(frag) != std::string::npos);
    }
}

TEST_CASE("gguf: every prefix of a valid file is refused, never read past", "[inference][gguf]") {
    const auto full = valid_builder().build();
    for (size_t n = 0; n < full.size(); ++n) {
        // A copy of exactly n bytes, so ASan would see a read past the prefix.
        const std::vector<uint8_t> prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        auto f = gguf_file::from_memory(prefix);
        INFO("prefix of " << n << " bytes");
        // The file's last tensor ends 26 bytes before its padded end: prefixes that keep all of
        // its bytes are valid files.
        if (n >= full.size() - 26) {
            CHECK(f.has_value());
        } else {
            REQUIRE_FALSE(f.has_value());
            CHECK_FALSE(f.message().empty());
        }
    }
}

TEST_CASE("gguf: typed accessors refuse the wrong type with key, found and expected", "[inference][gguf]") {
    gguf_builder g = valid_builder();
    g.kvs.push_back(kv_raw("neg", byte_sink{}.u32(t_i32).put<int32_t>(-5).b));
    g.kvs.push_back(kv_u64("big", k_u64_max));
    g.kvs.push_back(kv_u32("n", 7));
    const auto bytes = g.build();
    auto f = gguf_file::from_memory(bytes);
    REQUIRE(f.has_value());

    CHECK(f->get_uint("n").value() == 7u);
    CHECK(f->get_int("n").value() == 7);
    CHECK_FALSE(f->get_uint("absent").value().has_value());

    auto s = f->get_string("n");
    REQUIRE_FALSE(s.has_value());
    CHECK(s.message() == "metadata 'n' has type u32, expected string");
    auto neg = f->get_uint("neg");
    REQUIRE_FALSE(neg.has_value());
    CHECK(neg.message().find("is -5, expected a non-negative integer") != std::string::npos);
    CHECK(f->get_int("neg").value() == -5);
    auto big = f->get_int("big");
    REQUIRE_FALSE(big.has_value());
    CHECK(big.message().find("18446744073709551615") != std::string::npos);
    CHECK(f->get_uint("big").value() == k_u64_max);
    auto fl = f->get_f32_array("tokenizer.ggml.token_type");
    REQUIRE_FALSE(fl.has_value());
    CHECK(fl.message() == "metadata 'tokenizer.ggml.token_type' has type array[i32], expected array[f32]");
    CHECK(f->get_int_array("tokenizer.ggml.token_type").value().value() == std::vector<int64_t>{2, 1, 1});
    CHECK(f->get_f32_array("tokenizer.ggml.scores").value().value() == std::vector<float>{0.f, -1.f, -2.f});
    CHECK_FALSE(f->get_bool("general.architecture").has_value());
    CHECK_FALSE(f->get_float("n").has_value());
    CHECK_FALSE(f->get_string_array("tokenizer.ggml.scores").has_value());
}

TEST_CASE("gguf: version 2 reads like version 3", "[inference][gguf]") {
    gguf_builder g = valid_builder();
    g.version = 2;
    const auto bytes = g.build();
    auto f = gguf_file::from_memory(bytes);
    REQUIRE(f.has_value());
    CHECK(f->version() == 2);
    CHECK(f->tensors().size() == 3);
}

TEST_CASE("gguf: a custom alignment moves the data section and the offsets", "[inference][gguf]") {
    gguf_builder g = valid_builder();
    g.tensors[0].ne = {4};  // 16 bytes: the next tensor starts at 32 or 64 depending on the alignment
    g.alignment = 64;
    g.kvs.push_back(kv_u32("general.alignment", 64));
    const auto bytes = g.build();
    auto f = gguf_file::from_memory(bytes);
    REQUIRE(f.has_value());
    CHECK(f->alignment() == 64);
    CHECK(f->data_offset() % 64 == 0);
    CHECK(f->find_tensor("b")->offset == 64);
    CHECK(f->find_tensor("c")->offset == 128);
    // Without the key the reader pads to 32, so the same offsets leave a gap after tensor 'a'.
    g.kvs.pop_back();
    auto wrong = gguf_file::from_memory(g.build());
    REQUIRE_FALSE(wrong.has_value());
    CHECK(wrong.message().find("leaves a gap") != std::string::npos);
}
