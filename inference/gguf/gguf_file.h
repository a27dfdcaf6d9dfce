// gguf_file: a GGUF (v2, v3) model file, memory-mapped read-only and validated as a whole
// before anything is handed out. Metadata values and tensor data are zero-copy views into
// the mapping, valid as long as the gguf_file lives (it is movable, not copyable).
// Every size read from the file is untrusted: counts, lengths, dims, offsets are checked
// against the bytes that remain, with overflow-checked arithmetic, before any use.
// After open(), tensors tile the data section in offset order (each at the aligned end of
// the one before, none past the end of the file), names and keys are unique, and the keys
// llama.cpp relies on have their expected types (docs/gguf.md lists every rule).
// Thread-safety: immutable after open(); safe to read from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kernels/tensor_type.h"

namespace hearth::inference::gguf {

enum class value_type : uint32_t {
    u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
    string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};
std::string_view value_type_name(value_type t);

// One metadata value. Scalars are held decoded; strings and arrays point into the mapping.
struct metadata_value {
    value_type type{};
    // scalar payload (for integer types and bool: in `i` or `u`; for f32/f64: in `f`)
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0;
    std::string_view str;                 // type == string
    value_type elem_type{};               // type == array: element type (never array)
    uint64_t count = 0;                   // type == array: number of elements
    const uint8_t * data = nullptr;       // type == array of fixed-size elements: first element
    std::vector<std::string_view> strs;   // type == array of strings: each element
};

struct metadata_entry {
    std::string_view key;
    metadata_value value;
};

struct tensor_info {
    std::string_view name;
    kernels::tensor_type type{};
    uint32_t n_dims = 0;
    std::array<int64_t, 4> ne{1, 1, 1, 1};   // elements per dimension, ne[0] innermost (a row)
    uint64_t offset = 0;                     // from the start of the data section
    uint64_t size_bytes = 0;
    const uint8_t * data = nullptr;          // into the mapping

    int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
    uint64_t row_bytes() const;              // bytes of one ne[0] row
};

class gguf_file {
public:
    // Maps `path` read-only and validates it; the error names the problem and its offset.
    static result<gguf_file> open(const std::string & path);
    // Validates bytes the caller owns and keeps alive (fuzzing, tests). Nothing is copied.
    static result<gguf_file> from_memory(std::span<const uint8_t> bytes);

    gguf_file(gguf_file &&) noexcept;
    gguf_file & operator=(gguf_file &&) noexcept;
    ~gguf_file();

    uint32_t version() const;
    uint64_t file_size() const;
    uint64_t alignment() const;
    uint64_t data_offset() const;           // where the tensor data section starts (aligned end of the
                                            // header; past the end of a file that has no tensors)
    uint64_t tensor_data_bytes() const;     // sum of tensor sizes (what is mapped for weights)

    std::span<const metadata_entry> metadata() const;
    const metadata_value * find(std::string_view key) const;

    // Typed access: an absent key is std::nullopt; a present key of another type is an error
    // naming the key, the type found and the type expected.
    result<std::optional<uint64_t>> get_uint(std::string_view key) const;   // any unsigned or non-negative signed integer type
    result<std::optional<int64_t>> get_int(std::string_view key) const;     // any integer type
    result<std::optional<double>> get_float(std::string_view key) const;    // f32 or f64
    result<std::optional<bool>> get_bool(std::string_view key) const;
    result<std::optional<std::string_view>> get_string(std::string_view key) const;
    // Arrays: the element type must be the one asked for (the error says which it was).
    result<std::optional<std::span<const std::string_view>>> get_string_array(std::string_view key) const;
    result<std::optional<std::vector<float>>> get_f32_array(std::string_view key) const;
    result<std::optional<std::vector<int64_t>>> get_int_array(std::string_view key) const;

    std::span<const tensor_info> tensors() const;
    const tensor_info * find_tensor(std::string_view name) const;

    struct impl;  // opaque outside inference/gguf/ (gguf_file_impl.h)

private:
    explicit gguf_file(std::unique_ptr<impl> p);
    std::unique_ptr<impl> impl_;
};

}  // namespace hearth::inference::gguf
