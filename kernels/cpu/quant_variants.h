// Internal to kernels/cpu: how each instruction-set variant fills its quant_kernels table.
// add_quant_kernels_<isa>(table) overrides the entries that variant implements; dispatch.cpp
// calls it on a copy of the table below it. The per-ISA files define these functions and are
// compiled only for their architecture.
// Thread-safety: called only while dispatch.cpp builds its tables (once).
#pragma once

#include "kernels/cpu/dispatch.h"

namespace hearth::kernels::cpu {

void add_quant_kernels_scalar(quant_kernels & table);
#if defined(__x86_64__) || defined(_M_X64)
void add_quant_kernels_avx2(quant_kernels & table);
void add_quant_kernels_avx512_vnni(quant_kernels & table);   // on top of the AVX2 table
void add_kquant_kernels_avx512_vnni(quant_kernels & table);  // its q4_K / q6_K part
#endif
#if defined(__aarch64__)
void add_quant_kernels_neon(quant_kernels & table);
void add_quant_kernels_neon_dotprod(quant_kernels & table);
void add_quant_conversions_neon(quant_kernels & table);   // quantize/dequantize, kernels/cpu/arm/quant_convert_neon.cpp
#endif

// A matvec's rows in groups of P, one from each P-th part (rows r, r + q, ..., q = n_rows / P),
// then the rows left one at a time: rows<R>(r, dr) takes R rows from r on, dr apart. P long
// sequential streams the hardware prefetchers follow, and P rows' work to overlap (adjacent
// rows interleaved make the streams jump at every group: q5_0 from memory fell from 16 to 6 GB/s).
template <int P, class F>
void rows_in_parts(int64_t n_rows, F && rows) {
    const int64_t q = n_rows / P;
    for (int64_t r = 0; r < q; ++r) rows.template operator()<P>(r, q);
    for (int64_t r = P * q; r < n_rows; ++r) rows.template operator()<1>(r, 0);
}
template <class F>
void rows_in_halves(int64_t n_rows, F && rows) {
    rows_in_parts<2>(n_rows, rows);
}

// vec_dot_rows as whole rows taken alternately from the two halves: the two streams alone
// (q6_K from memory on one thread 27.6 -> 29.4 GB/s; q4_K's one-token dot, bound by its own
// work, gains nothing so).
template <vec_dot_fn Dot>
void vec_dot_rows_in_halves(int64_t n, const void * w, size_t w_stride_bytes, const void * a, float * out,
                            int64_t n_rows) {
    const auto * base = static_cast<const unsigned char *>(w);
    rows_in_halves(n_rows, [&]<int R>(int64_t r, int64_t dr) {
        for (int k = 0; k < R; ++k) out[r + k * dr] = Dot(n, base + (r + k * dr) * w_stride_bytes, a);
    });
}

// vec_dot_rows for a variant that has no multi-row kernel for a type: one row at a time.
template <vec_dot_fn Dot>
void vec_dot_rows_by_row(int64_t n, const void * w, size_t w_stride_bytes, const void * a, float * out,
                         int64_t n_rows) {
    const auto * base = static_cast<const unsigned char *>(w);
    for (int64_t r = 0; r < n_rows; ++r) out[r] = Dot(n, base + r * w_stride_bytes, a);
}

// vec_dot_tile for a variant that has no tile kernel for a type: one token at a time.
template <vec_dot_rows_fn Rows>
void vec_dot_tile_by_token(int64_t n, const void * w, size_t w_stride_bytes, int64_t n_rows, const void * a,
                           size_t a_stride_bytes, int64_t n_tokens, float * out, int64_t out_stride) {
    const auto * base = static_cast<const unsigned char *>(a);
    for (int64_t t = 0; t < n_tokens; ++t) Rows(n, w, w_stride_bytes, base + t * a_stride_bytes, out + t * out_stride, n_rows);
}

// Registers a weight type's dot products; a variant always replaces all three together so that
// vec_dot, vec_dot_rows and vec_dot_tile come from the same kernel and agree bit for bit.
template <vec_dot_fn Dot, vec_dot_rows_fn Rows = vec_dot_rows_by_row<Dot>, vec_dot_tile_fn Tile = vec_dot_tile_by_token<Rows>>
void set_vec_dot(quant_kernels & table, tensor_type t) {
    table[t].vec_dot = Dot;
    table[t].vec_dot_rows = Rows;
    table[t].vec_dot_tile = Tile;
}

}  // namespace hearth::kernels::cpu
