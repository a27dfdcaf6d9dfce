// Fills the scalar variant's table: every supported type gets its reference functions.
#include "kernels/cpu/generic/quant_scalar.h"
#include "kernels/cpu/quant_variants.h"

namespace hearth::kernels::cpu {

void add_quant_kernels_scalar(quant_kernels & table) {
    using tt = tensor_type;
    namespace s = scalar;
    auto set = [&](tt t, dequantize_row_fn deq, vec_dot_fn dot, vec_dot_rows_fn rows, tt dot_type) {
        table[t].dequantize_row = deq;
        table[t].vec_dot = dot;
        table[t].vec_dot_rows = rows;
        table[t].vec_dot_type = dot_type;
    };
    set(tt::f32, s::dequantize_row_f32, s::vec_dot_f32, vec_dot_rows_by_row<s::vec_dot_f32>, tt::f32);
    set(tt::f16, s::dequantize_row_f16, s::vec_dot_f16, vec_dot_rows_by_row<s::vec_dot_f16>, tt::f16);
    set(tt::bf16, s::dequantize_row_bf16, s::vec_dot_bf16, vec_dot_rows_by_row<s::vec_dot_bf16>, tt::bf16);
    set(tt::q4_0, s::dequantize_row_q4_0, s::vec_dot_q4_0, vec_dot_rows_by_row<s::vec_dot_q4_0>, tt::q8_0);
    set(tt::q4_1, s::dequantize_row_q4_1, s::vec_dot_q4_1, vec_dot_rows_by_row<s::vec_dot_q4_1>, tt::q8_1);
    set(tt::q5_0, s::dequantize_row_q5_0, s::vec_dot_q5_0, vec_dot_rows_by_row<s::vec_dot_q5_0>, tt::q8_0);
    set(tt::q5_1, s::dequantize_row_q5_1, s::vec_dot_q5_1, vec_dot_rows_by_row<s::vec_dot_q5_1>, tt::q8_1);
    set(tt::q8_0, s::dequantize_row_q8_0, s::vec_dot_q8_0, vec_dot_rows_by_row<s::vec_dot_q8_0>, tt::q8_0);
    set(tt::iq4_nl, s::dequantize_row_iq4_nl, s::vec_dot_iq4_nl, vec_dot_rows_by_row<s::vec_dot_iq4_nl>, tt::q8_0);
    set(tt::q2_k, s::dequantize_row_q2_K, s::vec_dot_q2_K, vec_dot_rows_by_row<s::vec_dot_q2_K>, tt::q8_k);
    set(tt::q3_k, s::dequantize_row_q3_K, s::vec_dot_q3_K, vec_dot_rows_by_row<s::vec_dot_q3_K>, tt::q8_k);
    set(tt::q4_k, s::dequantize_row_q4_K, s::vec_dot_q4_K, vec_dot_rows_by_row<s::vec_dot_q4_K>, tt::q8_k);
    set(tt::q5_k, s::dequantize_row_q5_K, s::vec_dot_q5_K, vec_dot_rows_by_row<s::vec_dot_q5_K>, tt::q8_k);
    set(tt::q6_k, s::dequantize_row_q6_K, s::vec_dot_q6_K, vec_dot_rows_by_row<s::vec_dot_q6_K>, tt::q8_k);
    set(tt::iq4_xs, s::dequantize_row_iq4_xs, s::vec_dot_iq4_xs, vec_dot_rows_by_row<s::vec_dot_iq4_xs>, tt::q8_k);
    // Activation-only types: dequantizable (for tests and debugging), never weights.
    table[tt::q8_1].dequantize_row = s::dequantize_row_q8_1;
    table[tt::q8_k].dequantize_row = s::dequantize_row_q8_K;

    table[tt::f32].quantize_row = s::quantize_row_f32;
    table[tt::f16].quantize_row = s::quantize_row_f16;
    table[tt::bf16].quantize_row = s::quantize_row_bf16;
    table[tt::q4_0].quantize_row = s::quantize_row_q4_0;
    table[tt::q8_0].quantize_row = s::quantize_row_q8_0;
    table[tt::q8_1].quantize_row = s::quantize_row_q8_1;
    table[tt::q8_k].quantize_row = s::quantize_row_q8_K;
}

}  // namespace hearth::kernels::cpu
