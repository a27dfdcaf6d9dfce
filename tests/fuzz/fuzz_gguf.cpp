// fuzz-links: hearth_inference
// Feeds arbitrary bytes to the GGUF reader. A malformed file must be refused with an error,
// never crash, hang, trip a sanitizer or allocate in proportion to a count it claims; an
// accepted file must be safe to read in full: every metadata value through every typed
// accessor, and every byte of every tensor (ASan checks the views stay inside the input);
// describe_model (hearth model info) must then describe it or refuse it, never wrap or crash.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "inference/gguf/gguf_file.h"
#include "inference/load/model_info.h"

namespace {

using namespace hearth::inference::gguf;

volatile uint64_t g_sink;

uint64_t touch(const uint8_t * p, uint64_t n) {
    uint64_t h = 0;
    for (uint64_t i = 0; i < n; ++i) h = h * 31 + p[i];
    return h;
}

uint64_t touch_value(const gguf_file & f, const metadata_entry & e) {
    const metadata_value & v = e.value;
    uint64_t h = v.u ^ static_cast<uint64_t>(v.i) ^ static_cast<uint64_t>(v.f != 0);
    h += touch(reinterpret_cast<const uint8_t *>(v.str.data()), v.str.size());
    for (const auto s : v.strs) h += touch(reinterpret_cast<const uint8_t *>(s.data()), s.size());
    if (v.type == value_type::array && v.elem_type != value_type::string) {
        uint64_t elem = 8;
        switch (v.elem_type) {
            case value_type::u8: case value_type::i8: case value_type::boolean: elem = 1; break;
            case value_type::u16: case value_type::i16: elem = 2; break;
            case value_type::u32: case value_type::i32: case value_type::f32: elem = 4; break;
            default: break;
        }
        h += touch(v.data, v.count * elem);
    }
    // Every typed accessor must answer (value or error) for every key, whatever its type.
    if (auto r = f.get_uint(e.key); r && *r) h += **r;
    if (auto r = f.get_int(e.key); r && *r) h += static_cast<uint64_t>(**r);
    if (auto r = f.get_float(e.key); r && *r) h += static_cast<uint64_t>(**r != 0);
    if (auto r = f.get_bool(e.key); r && *r) h += **r;
    if (auto r = f.get_string(e.key); r && *r) h += (*r)->size();
    if (auto r = f.get_string_array(e.key); r && *r) h += (*r)->size();
    if (auto r = f.get_f32_array(e.key); r && *r) h += (*r)->size();
    if (auto r = f.get_int_array(e.key); r && *r) for (const int64_t x : **r) h += static_cast<uint64_t>(x);
    if (f.find(e.key) != &v) __builtin_trap();  // the index must find what the list holds
    return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    auto file = gguf_file::from_memory(std::span<const uint8_t>(data, size));
    if (!file) {
        if (file.message().empty()) __builtin_trap();  // a refusal always says why
        return 0;
    }
    const gguf_file & f = *file;
    uint64_t h = f.version() + f.alignment() + f.data_offset() + f.file_size();
    for (const auto & e : f.metadata()) h += touch_value(f, e);
    uint64_t sum_bytes = 0;
    for (const auto & t : f.tensors()) {
        if (t.data < data || t.data + t.size_bytes > data + size) __builtin_trap();
        if (t.size_bytes != t.row_bytes() * static_cast<uint64_t>(t.n_elements() / t.ne[0])) __builtin_trap();
        if (f.find_tensor(t.name) != &t) __builtin_trap();
        h += touch(t.data, t.size_bytes);
        sum_bytes += t.size_bytes;
    }
    if (sum_bytes != f.tensor_data_bytes()) __builtin_trap();
    if (auto info = hearth::inference::describe_model(f); info) {
        if (info->n_tensors != f.tensors().size()) __builtin_trap();
        h += info->memory.total_bytes() + info->n_params;
    } else if (info.message().empty()) {
        __builtin_trap();
    }
    g_sink = h;
    return 0;
}
