// What the CUDA backend runs, as constants: the weight types its matrix products decode and the
// KV-cache types its kv_append and attention take. Plain C++ over kernels/tensor_type.h (no CUDA
// header), so a build without CUDA can ask too (the offload planner's tests); cuda::supports_weight
// and the device's takes_cache answer from here.
// Thread-safety: constants.
#pragma once

#include "kernels/tensor_type.h"

namespace hearth::kernels::cuda {

// Weights of matmul and matmul_experts: the types of the pinned Q4_K_M models (q4_K, q5_0, q6_K,
// q8_0, f32 norms) and q4_0 and f16. q8_0, q4_0 and q5_0 take their activations in q8_0 (from the
// caller's quantize_q8_0), q4_K and q6_K in q8_K (quantized by the product itself), as the CPU.
constexpr bool declares_weight(tensor_type t) {
    switch (t) {
    case tensor_type::q8_0:
    case tensor_type::q4_0:
    case tensor_type::q5_0:
    case tensor_type::q4_k:
    case tensor_type::q6_k:
    case tensor_type::f16:
    case tensor_type::f32: return true;
    default: return false;
    }
}

// K and V rows of the cache (each of the two may be any of these).
constexpr bool declares_cache(tensor_type t) {
    return t == tensor_type::f16 || t == tensor_type::q8_0 || t == tensor_type::q4_0;
}

}  // namespace hearth::kernels::cuda
