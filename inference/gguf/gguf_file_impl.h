// Private to inference/gguf/: the state behind gguf_file, shared by the parser
// (gguf_file.cpp) and the typed metadata accessors (gguf_metadata.cpp).
// Invariant: every string_view and pointer points into `bytes`, which `map` owns
// (open) or the caller keeps alive (from_memory); the indexes hold positions in the vectors.
// Thread-safety: immutable once built.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "inference/gguf/gguf_file.h"
#include "inference/gguf/mapped_file.h"

namespace hearth::inference::gguf {

struct gguf_file::impl {
    mapped_file map;                      // empty when the caller owns the bytes
    std::span<const uint8_t> bytes;
    uint32_t version = 0;
    uint64_t alignment = 32;
    uint64_t data_offset = 0;
    uint64_t tensor_data_bytes = 0;
    std::vector<metadata_entry> metadata;
    std::unordered_map<std::string_view, size_t> metadata_index;
    std::vector<tensor_info> tensors;
    std::unordered_map<std::string_view, size_t> tensor_index;
};

// "u32", "array[string]": a value's type as error messages show it.
std::string type_text(value_type t, value_type elem_type);

// Parses and validates `bytes` into a new impl; the error names the problem and its offset.
result<std::unique_ptr<gguf_file::impl>> parse_gguf(std::span<const uint8_t> bytes);

}  // namespace hearth::inference::gguf
