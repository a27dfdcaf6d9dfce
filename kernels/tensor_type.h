// The element types a GGUF tensor can have, numbered as GGUF files store them
// (ggml's type ids), with each type's block size and bytes per block.
// Ids that ggml has removed stay unknown here so a file using them is refused.
// Thread-safety: immutable tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace hearth::kernels {

enum class tensor_type : uint32_t {
    f32 = 0, f16 = 1, q4_0 = 2, q4_1 = 3,
    // 4, 5: Q4_2 and Q4_3, removed from ggml
    q5_0 = 6, q5_1 = 7, q8_0 = 8, q8_1 = 9,
    q2_k = 10, q3_k = 11, q4_k = 12, q5_k = 13, q6_k = 14, q8_k = 15,
    iq2_xxs = 16, iq2_xs = 17, iq3_xxs = 18, iq1_s = 19, iq4_nl = 20,
    iq3_s = 21, iq2_s = 22, iq4_xs = 23,
    i8 = 24, i16 = 25, i32 = 26, i64 = 27, f64 = 28, iq1_m = 29, bf16 = 30,
    // 31..33: Q4_0_4_4, Q4_0_4_8, Q4_0_8_8, removed (repacking is done at load now)
    tq1_0 = 34, tq2_0 = 35,
    // 36..38: IQ4_NL_4_4, IQ4_NL_4_8, IQ4_NL_8_8, removed
    mxfp4 = 39,
};

struct tensor_type_traits {
    std::string_view name;      // as llama.cpp prints it: "q4_K", "f16"
    int64_t block_size;         // elements per block (1 for plain types)
    size_t type_size;           // bytes per block
    bool known;                 // false for unassigned or removed ids
};

// Traits for a raw type id read from a file; `known` is false for ids we do not recognise.
const tensor_type_traits & tensor_type_info(uint32_t raw_type);
inline const tensor_type_traits & tensor_type_info(tensor_type t) {
    return tensor_type_info(static_cast<uint32_t>(t));
}

}  // namespace hearth::kernels
