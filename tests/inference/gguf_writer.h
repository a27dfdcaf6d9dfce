// Test-only GGUF byte writer: builds a valid file from a description, with knobs that
// break exactly one rule at a time, so each malformed-file test states its defect plainly.
// Not a general writer (the `gguf` Python package is the independent one); it writes what
// the test says, including what no real writer would.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/tensor_type.h"

namespace hearth::test {

// Little-endian byte appender.
struct byte_sink {
    std::vector<uint8_t> b;

    template <class T>
    byte_sink & put(T v) {
        uint8_t raw[sizeof(T)];
        std::memcpy(raw, &v, sizeof(T));
        b.insert(b.end(), raw, raw + sizeof(T));
        return *this;
    }
    byte_sink & u8(uint8_t v) { return put(v); }
    byte_sink & u32(uint32_t v) { return put(v); }
    byte_sink & u64(uint64_t v) { return put(v); }
    byte_sink & i64(int64_t v) { return put(v); }
    byte_sink & str(std::string_view s) {
        u64(s.size());
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    byte_sink & bytes(const std::vector<uint8_t> & v) {
        b.insert(b.end(), v.begin(), v.end());
        return *this;
    }
};

// GGUF value type ids, as the file stores them.
enum gguf_type : uint32_t {
    t_u8 = 0, t_i8 = 1, t_u16 = 2, t_i16 = 3, t_u32 = 4, t_i32 = 5, t_f32 = 6, t_bool = 7,
    t_string = 8, t_array = 9, t_u64 = 10, t_i64 = 11, t_f64 = 12,
};

struct test_kv {
    std::string key;
    std::vector<uint8_t> typed_value;  // u32 type id followed by the value's bytes
};

inline test_kv kv_u32(std::string key, uint32_t v) { return {std::move(key), byte_sink{}.u32(t_u32).u32(v).b}; }
inline test_kv kv_u64(std::string key, uint64_t v) { return {std::move(key), byte_sink{}.u32(t_u64).u64(v).b}; }
inline test_kv kv_string(std::string key, std::string_view v) { return {std::move(key), byte_sink{}.u32(t_string).str(v).b}; }
inline test_kv kv_f32_array(std::string key, const std::vector<float> & v) {
    byte_sink s;
    s.u32(t_array).u32(t_f32).u64(v.size());
    for (float x : v) s.put(x);
    return {std::move(key), s.b};
}
inline test_kv kv_i32_array(std::string key, const std::vector<int32_t> & v) {
    byte_sink s;
    s.u32(t_array).u32(t_i32).u64(v.size());
    for (int32_t x : v) s.put(x);
    return {std::move(key), s.b};
}
inline test_kv kv_string_array(std::string key, const std::vector<std::string> & v) {
    byte_sink s;
    s.u32(t_array).u32(t_string).u64(v.size());
    for (const auto & x : v) s.str(x);
    return {std::move(key), s.b};
}
// Any bytes after the key: the test writes the type id and value by hand.
inline test_kv kv_raw(std::string key, std::vector<uint8_t> typed_value) { return {std::move(key), std::move(typed_value)}; }

struct test_tensor {
    std::string name;
    uint32_t type = 0;                   // ggml type id
    std::vector<int64_t> ne;             // written as given (n_dims = ne.size() unless overridden)
    std::optional<uint32_t> n_dims;      // override the n_dims field only
    std::optional<uint64_t> offset;      // override the data offset (default: aligned running offset)
};

inline test_tensor make_tensor(std::string name, uint32_t type, std::vector<int64_t> ne) {
    test_tensor t;
    t.name = std::move(name);
    t.type = type;
    t.ne = std::move(ne);
    return t;
}

struct gguf_builder {
    char magic[4] = {'G', 'G', 'U', 'F'};
    uint32_t version = 3;
    std::optional<uint64_t> n_tensors;   // override the counts only
    std::optional<uint64_t> n_kv;
    uint64_t alignment = 32;             // used for padding; add general.alignment yourself
    std::vector<test_kv> kvs;
    std::vector<test_tensor> tensors;

    // Bytes of a tensor as the reader computes them; 0 for types it does not know.
    static uint64_t tensor_bytes(const test_tensor & t) {
        const auto & tr = kernels::tensor_type_info(t.type);
        if (!tr.known || t.ne.empty()) return 0;
        for (int64_t n : t.ne)
            if (n <= 0 || n > (int64_t{1} << 24)) return 0;  // sizes the reader must refuse: write no data
        uint64_t n = 1;
        for (size_t d = 1; d < t.ne.size(); ++d) n *= static_cast<uint64_t>(t.ne[d]);
        return static_cast<uint64_t>(t.ne[0] / tr.block_size) * tr.type_size * n;
    }

    std::vector<uint8_t> build() const {
        byte_sink s;
        s.b.insert(s.b.end(), magic, magic + 4);
        s.u32(version).u64(n_tensors.value_or(tensors.size())).u64(n_kv.value_or(kvs.size()));
        for (const auto & kv : kvs) s.str(kv.key).bytes(kv.typed_value);
        uint64_t running = 0;
        std::vector<uint64_t> sizes;
        for (const auto & t : tensors) {
            s.str(t.name).u32(t.n_dims.value_or(static_cast<uint32_t>(t.ne.size())));
            for (int64_t n : t.ne) s.i64(n);
            s.u32(t.type).u64(t.offset.value_or(running));
            const uint64_t size = tensor_bytes(t);
            sizes.push_back(size);
            running += (size + alignment - 1) / alignment * alignment;
        }
        if (tensors.empty()) return s.b;
        while (s.b.size() % alignment) s.u8(0);
        // Data: each tensor filled with its index + 1, padded to the alignment.
        for (size_t i = 0; i < tensors.size(); ++i) {
            s.b.insert(s.b.end(), sizes[i], static_cast<uint8_t>(i + 1));
            while (s.b.size() % alignment) s.u8(0);
        }
        return s.b;
    }
};

}  // namespace hearth::test
