#include "kernels/quant.h"

#include <cassert>

#include "kernels/cpu/dispatch.h"

namespace hearth::kernels {

bool is_supported(tensor_type t) {
    const auto raw = static_cast<size_t>(t);
    return raw < cpu::k_n_tensor_types && cpu::active_quant_kernels()[t].dequantize_row != nullptr;
}

size_t row_size(tensor_type t, int64_t n) {
    const tensor_type_traits & info = tensor_type_info(t);
    assert(info.known && n % info.block_size == 0);
    return static_cast<size_t>(n / info.block_size) * info.type_size;
}

void dequantize_row(tensor_type t, const void * src, float * dst, int64_t n) {
    const auto fn = cpu::active_quant_kernels()[t].dequantize_row;
    assert(fn && n % tensor_type_info(t).block_size == 0);
    fn(src, dst, n);
}

tensor_type vec_dot_type(tensor_type t) {
    return cpu::active_quant_kernels()[t].vec_dot_type;
}

void quantize_row(tensor_type t, const float * src, void * dst, int64_t n) {
    const auto fn = cpu::active_quant_kernels()[t].quantize_row;
    assert(fn && n % tensor_type_info(t).block_size == 0);
    fn(src, dst, n);
}

float vec_dot(tensor_type wt, int64_t n, const void * w, const void * a) {
    const auto fn = cpu::active_quant_kernels()[wt].vec_dot;
    assert(fn && n % tensor_type_info(wt).block_size == 0);
    return fn(n, w, a);
}

void vec_dot_rows(tensor_type wt, int64_t n, const void * w, size_t w_stride_bytes, const void * a, float * out,
                  int64_t n_rows) {
    const auto fn = cpu::active_quant_kernels()[wt].vec_dot_rows;
    assert(fn && n % tensor_type_info(wt).block_size == 0);
    fn(n, w, w_stride_bytes, a, out, n_rows);
}

void vec_dot_tile(tensor_type wt, int64_t n, const void * w, size_t w_stride_bytes, int64_t n_rows, const void * a,
                  size_t a_stride_bytes, int64_t n_tokens, float * out, int64_t out_stride) {
    const auto fn = cpu::active_quant_kernels()[wt].vec_dot_tile;
    assert(fn && n % tensor_type_info(wt).block_size == 0);
    fn(n, w, w_stride_bytes, n_rows, a, a_stride_bytes, n_tokens, out, out_stride);
}

bool vec_dot_tile_in_batch_order(tensor_type wt) { return cpu::active_quant_kernels()[wt].tile_batch_order; }

bool vec_dot_tile_repacks_rows(tensor_type wt) { return cpu::active_quant_kernels()[wt].tile_repacks_rows; }

}  // namespace hearth::kernels
