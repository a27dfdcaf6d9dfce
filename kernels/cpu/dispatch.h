// The one place that chooses implementations from the CPU's features, once, at start-up.
// Each op family (quant formats here; matmul/ops may add theirs) owns a small table of function
// pointers per instruction-set variant (`isa`). A variant's table starts as a copy of the one
// below it (scalar, or neon for neon_dotprod) and overrides only what it implements, so every
// entry is always callable. Tests walk available_isas() to compare every path with the scalar one.
// The environment variable HEARTH_ISA (scalar, avx2, neon, neon_dotprod) caps the choice at a
// lesser variant the CPU supports, for measurements; an unknown or unsupported name is ignored.
// Thread-safety: tables are built once (function-local statics) and immutable afterwards.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "kernels/tensor_type.h"

namespace hearth::kernels::cpu {

enum class isa { scalar, avx2, avx512_vnni, neon, neon_dotprod };

std::string_view isa_name(isa i);

// The variants this CPU can run, scalar first, best last.
std::span<const isa> available_isas();

// The variant in use: the best available one, or the HEARTH_ISA cap.
isa active_isa();

// The choice active_isa() makes: the last of `available`, or the one named `cap` if it is there.
isa choose_isa(std::span<const isa> available, std::string_view cap);

// --- quant formats -------------------------------------------------------------------------
// n is the element count of a row (a multiple of the block size); pointers are whole rows.
// vec_dot_rows gives, element for element, the bits vec_dot gives, and so does vec_dot_tile
// unless tile_batch_order is set: then the tile sums in the order llama.cpp uses for a batch
// (x86 q4_K / q6_K: quant_ktiles_avx2.cpp), vec_dot in its one-token order, equal up to float
// rounding. Either way a tile gives each token the same bits whatever the other tokens are.
using dequantize_row_fn = void (*)(const void * src, float * dst, int64_t n);
using quantize_row_fn = void (*)(const float * src, void * dst, int64_t n);
using vec_dot_fn = float (*)(int64_t n, const void * w, const void * a);
// out[r] = vec_dot(n, w + r * w_stride_bytes, a) for r in [0, n_rows): one activation row against
// several weight rows, so SIMD variants can load each activation block once for several rows.
using vec_dot_rows_fn = void (*)(int64_t n, const void * w, size_t w_stride_bytes, const void * a,
                                 float * out, int64_t n_rows);
// out[t * out_stride + r] = vec_dot(n, w + r * w_stride_bytes, a + t * a_stride_bytes) for r < n_rows,
// t < n_tokens: a tile of weight rows against several activation rows (prefill), so SIMD variants
// unpack each weight block once for several tokens.
using vec_dot_tile_fn = void (*)(int64_t n, const void * w, size_t w_stride_bytes, int64_t n_rows, const void * a,
                                 size_t a_stride_bytes, int64_t n_tokens, float * out, int64_t out_stride);

struct quant_type_kernels {
    dequantize_row_fn dequantize_row = nullptr;
    quantize_row_fn quantize_row = nullptr;   // set for the types that rows may be converted to
    vec_dot_fn vec_dot = nullptr;             // set for weight types
    vec_dot_rows_fn vec_dot_rows = nullptr;   // set wherever vec_dot is
    vec_dot_tile_fn vec_dot_tile = nullptr;   // set wherever vec_dot is
    tensor_type vec_dot_type = tensor_type::f32;
    bool tile_batch_order = false;            // see above
    bool tile_repacks_rows = false;           // vec_dot_tile rearranges its rows on every call (quant.h)
};

inline constexpr size_t k_n_tensor_types = 40;

struct quant_kernels {
    isa variant = isa::scalar;
    std::array<quant_type_kernels, k_n_tensor_types> types{};

    const quant_type_kernels & operator[](tensor_type t) const { return types[static_cast<size_t>(t)]; }
    quant_type_kernels & operator[](tensor_type t) { return types[static_cast<size_t>(t)]; }
};

// Precondition: i is in available_isas().
const quant_kernels & quant_kernels_for(isa i);
const quant_kernels & active_quant_kernels();

}  // namespace hearth::kernels::cpu
