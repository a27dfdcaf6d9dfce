// The reader against the `gguf` Python package, an independent implementation:
//  - files its GGUFWriter writes (every metadata type, several tensor types, a custom
//    alignment, a metadata-only file) read back value for value and byte for byte;
//  - every fixture GGUF (4 models, 5 vocabularies) read by its GGUFReader and by ours:
//    every key, type and value, every tensor's name, type, shape, data offset and size.
// The Python side writes a line manifest (see tests/python/write_gguf_samples.py).
#include <catch2/catch.hpp>

#include <algorithm>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "inference/gguf/gguf_file.h"
#include "tests/inference/python_util.h"
#include "tests/default_model.h"

namespace fs = std::filesystem;
using namespace hearth::inference::gguf;
using namespace hearth::inference::testing;

namespace {

std::string hex(const uint8_t * p, size_t n) {
    static const char * digits = "0123456789abcdef";
    if (n == 0) return "-";
    std::string s;
    s.reserve(2 * n);
    for (size_t i = 0; i < n; ++i) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}
std::string hex(std::string_view s) { return hex(reinterpret_cast<const uint8_t *>(s.data()), s.size()); }

// One element of a fixed-size value at p, in the manifest's encoding.
std::string encode(value_type t, const uint8_t * p) {
    auto load = [p](auto v) { std::memcpy(&v, p, sizeof(v)); return v; };
    switch (t) {
        case value_type::u8: return std::to_string(load(uint8_t{}));
        case value_type::i8: return std::to_string(load(int8_t{}));
        case value_type::u16: return std::to_string(load(uint16_t{}));
        case value_type::i16: return std::to_string(load(int16_t{}));
        case value_type::u32: return std::to_string(load(uint32_t{}));
        case value_type::i32: return std::to_string(load(int32_t{}));
        case value_type::u64: return std::to_string(load(uint64_t{}));
        case value_type::i64: return std::to_string(load(int64_t{}));
        case value_type::f32: return hex(p, 4);
        case value_type::f64: return hex(p, 8);
        case value_type::boolean: return p[0] ? "1" : "0";
        default: return "?";
    }
}

size_t elem_size(value_type t) {
    switch (t) {
        case value_type::u8: case value_type::i8: case value_type::boolean: return 1;
        case value_type::u16: case value_type::i16: return 2;
        case value_type::u32: case value_type::i32: case value_type::f32: return 4;
        default: return 8;
    }
}

// A decoded scalar, re-encoded: checks the reader's decoded fields, not just raw bytes.
std::string encode_scalar(const metadata_value & v) {
    switch (v.type) {
        case value_type::u8: case value_type::u16: case value_type::u32: case value_type::u64: return std::to_string(v.u);
        case value_type::i8: case value_type::i16: case value_type::i32: case value_type::i64: return std::to_string(v.i);
        case value_type::f32: { const float x = static_cast<float>(v.f); return hex(reinterpret_cast<const uint8_t *>(&x), 4); }
        case value_type::f64: return hex(reinterpret_cast<const uint8_t *>(&v.f), 8);
        case value_type::boolean: return v.u ? "1" : "0";
        case value_type::string: return hex(v.str);
        default: return "?";
    }
}

std::string unhex(const std::string & h) {
    if (h == "-") return {};
    std::string s;
    for (size_t i = 0; i + 1 < h.size(); i += 2) s += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
    return s;
}

std::vector<std::string> split(const std::string & line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

// Checks everything a manifest states about `f`; returns the number of lines checked.
size_t check_manifest(const gguf_file & f, const fs::path & expect) {
    std::ifstream in(expect);
    REQUIRE(in);
    size_t i_kv = 0, i_tensor = 0, lines = 0;
    for (std::string line; std::getline(in, line);) {
        const auto w = split(line);
        if (w.empty()) continue;
        ++lines;
        if (w[0] == "kv" || w[0] == "arr") {
            REQUIRE(i_kv < f.metadata().size());
            const metadata_entry & e = f.metadata()[i_kv++];
            INFO("key " << unhex(w[1]));
            REQUIRE(e.key == unhex(w[1]));
            REQUIRE(f.find(e.key) == &e.value);
            if (w[0] == "kv") {
                CHECK(value_type_name(e.value.type) == w[2]);
                CHECK(encode_scalar(e.value) == w[3]);
                continue;
            }
            REQUIRE(e.value.type == value_type::array);
            CHECK(value_type_name(e.value.elem_type) == w[2]);
            REQUIRE(e.value.count == std::stoull(w[3]));
            REQUIRE(w.size() == 4 + e.value.count);
            size_t mismatches = 0;
            for (uint64_t j = 0; j < e.value.count; ++j) {
                const std::string got = e.value.elem_type == value_type::string
                                            ? hex(e.value.strs[j])
                                            : encode(e.value.elem_type, e.value.data + j * elem_size(e.value.elem_type));
                mismatches += got != w[4 + j];
            }
            CHECK(mismatches == 0);
        } else if (w[0] == "tensor" || w[0] == "tinfo") {
            REQUIRE(i_tensor < f.tensors().size());
            const tensor_info & t = f.tensors()[i_tensor++];
            INFO("tensor " << unhex(w[1]));
            REQUIRE(t.name == unhex(w[1]));
            CHECK(f.find_tensor(t.name) == &t);
            CHECK(static_cast<uint32_t>(t.type) == std::stoul(w[2]));
            const uint32_t n_dims = std::stoul(w[3]);
            REQUIRE(t.n_dims == n_dims);
            for (uint32_t d = 0; d < 4; ++d) CHECK(t.ne[d] == (d < n_dims ? std::stoll(w[4 + d]) : 1));
            if (w[0] == "tensor") {
                CHECK(hex(t.data, t.size_bytes) == w[4 + n_dims]);
            } else {
                CHECK(f.data_offset() + t.offset == std::stoull(w[4 + n_dims]));
                CHECK(t.size_bytes == std::stoull(w[5 + n_dims]));
            }
        } else if (w[0] == "alignment") {
            CHECK(f.alignment() == std::stoull(w[1]));
        } else {
            FAIL("unknown manifest line: " << w[0]);
        }
    }
    CHECK(i_kv == f.metadata().size());
    CHECK(i_tensor == f.tensors().size());
    return lines;
}

}  // namespace

TEST_CASE("gguf: files written by the gguf package read back value for value", "[inference][gguf]") {
    temp_dir dir;
    run_python("write_gguf_samples.py", quoted(dir.path.string()));
    for (const char * name : {"every_type", "aligned_256", "metadata_only"}) {
        INFO("sample " << name);
        auto f = gguf_file::open((dir.path / (std::string(name) + ".gguf")).string());
        REQUIRE(f.has_value());
        CHECK(f->version() == 3);
        CHECK(check_manifest(*f, dir.path / (std::string(name) + ".expect")) > 2);
        for (const auto & t : f->tensors())  // mmap is page-aligned, so data is aligned in memory too
            CHECK(reinterpret_cast<uintptr_t>(t.data) % f->alignment() == 0);
    }
    auto every = gguf_file::open((dir.path / "every_type.gguf").string());
    REQUIRE(every.has_value());
    CHECK(every->tensors().size() == 12);
    CHECK(every->metadata().size() == 30);
    auto aligned = gguf_file::open((dir.path / "aligned_256.gguf").string());
    REQUIRE(aligned.has_value());
    CHECK(aligned->alignment() == 256);
    CHECK(aligned->data_offset() % 256 == 0);
    CHECK(aligned->find_tensor("b")->offset == 256);
    CHECK(aligned->find_tensor("c")->offset == 512);
}

TEST_CASE("gguf: every fixture file reads as the gguf package reads it", "[inference][gguf]") {
    const fs::path fixtures = HEARTH_FIXTURES_DIR;
    std::vector<fs::path> files;
    for (const char * m : {"F32", "F16", "Q8_0", "Q4_0"})
        files.push_back(fixtures / "models" / (std::string("stories260K-") + m + ".gguf"));
    for (const char * v : {"llama-spm", "phi-3", "gpt-2", "starcoder", "deepseek-coder"})
        files.push_back(fixtures / "tokenizer" / (std::string("ggml-vocab-") + v + ".gguf"));
    temp_dir dir;
    std::string args = quoted(dir.path.string());
    for (const auto & p : files) {
        REQUIRE(fs::exists(p));
        args += ' ';
        args += quoted(p.string());
    }
    run_python("dump_gguf.py", args);
    for (const auto & p : files) {
        INFO("file " << p.filename().string());
        auto f = gguf_file::open(p.string());
        REQUIRE(f.has_value());
        CHECK(f->file_size() == fs::file_size(p));
        CHECK(check_manifest(*f, dir.path / (p.filename().string() + ".expect")) > 10);
    }
}

TEST_CASE("gguf: downloaded models read as the gguf package reads them", "[inference][gguf][default-model]") {
    // $HEARTH_MODEL, or every .gguf that scripts/fetch-model left in the models folder.
    std::vector<fs::path> models;
    if (const char * env = std::getenv("HEARTH_MODEL"); env && *env) {
        models.push_back(env);
    } else {
        const fs::path dir = hearth::model_cache_dir();
        std::error_code ec;
        if (!dir.empty() && fs::is_directory(dir, ec))
            for (const auto & e : fs::directory_iterator(dir, ec))
                if (e.path().extension() == ".gguf") models.push_back(e.path());
    }
    for (auto & m : models) {  // default.gguf is a link to a named model: check each file once
        std::error_code ec;
        if (auto c = fs::canonical(m, ec); !ec) m = c;
    }
    std::sort(models.begin(), models.end());
    models.erase(std::unique(models.begin(), models.end()), models.end());
    if (models.empty()) HEARTH_SKIP("no downloaded model (run scripts/fetch-model or set HEARTH_MODEL)");
    temp_dir dir;
    std::string args = quoted(dir.path.string());
    for (const auto & p : models) {
        args += ' ';
        args += quoted(p.string());
    }
    run_python("dump_gguf.py", args);
    for (const auto & p : models) {
        INFO("model " << p.string());
        auto f = gguf_file::open(p.string());
        REQUIRE(f.has_value());
        CHECK(check_manifest(*f, dir.path / (p.filename().string() + ".expect")) > 10);
        CHECK(f->data_offset() + f->tensor_data_bytes() <= f->file_size());
    }
}
