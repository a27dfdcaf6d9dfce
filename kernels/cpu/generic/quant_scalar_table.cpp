// Fills the scalar variant's table: every supported type gets its reference functions.
#include "kernels/cpu/generic/quant_scalar.h"
#include "kernels/cpu/quant_variants.h"

namespace hearth::kernels::cpu {

void add_quant_kernels_scalar(quant_kernels & table) {
    using tt = tensor_type;
    namespace s = scalar;
    auto set = [&](tt t, dequantize_row_fn deq, tt dot_type) {
        table[t].dequantize_row = deq;
        table[t].vec_dot_type = dot_type;
    };
    set(tt::f32, s::dequantize_row_f32, tt::f32);
    set_vec_dot<s::vec_dot_f32>(table, tt::f32);
    set(tt::f16, s::dequantize_row_f16, tt::f16);
    set_vec_dot<s::vec_dot_f16>(table, tt::f16);
    set(tt::bf16, s::dequantize_row_bf16, tt::bf16);
    set_vec_dot<s::vec_dot_bf16>(table, tt::bf16);
    set(tt::q4_0, s::dequantize_row_q4_0, tt::q8_0);
    set_vec_dot<s::vec_dot_q4_0>(table, tt::q4_0);
    set(tt::q4_1, s::dequantize_row_q4_1, tt::q8_1);
    set_vec_dot<s::vec_dot_q4_1>(table, tt::q4_1);
    set(tt::q5_0, s::dequantize_row_q5_0, tt::q8_0);
    set_vec_dot<s::vec_dot_q5_0>(table, tt::q5_0);
    set(tt::q5_1, s::dequantize_row_q5_1, tt::q8_1);
    set_vec_dot<s::vec_dot_q5_1>(table, tt::q5_1);
    set(tt::q8_0, s::dequantize_row_q8_0, tt::q8_0);
    set_vec_dot<s::vec_dot_q8_0>(table, tt::q8_0);
    set(tt::iq4_nl, s::dequantize_row_iq4_nl, tt::q8_0);
    set_vec_dot<s::vec_dot_iq4_nl>(table, tt::iq4_nl);
    set(tt::q2_k, s::dequantize_row_q2_K, tt::q8_k);
    set_vec_dot<s::vec_dot_q2_K>(table, tt::q2_k);
    set(tt::q3_k, s::dequantize_row_q3_K, tt::q8_k);
    set_vec_dot<s::vec_dot_q3_K>(table, tt::q3_k);
    set(tt::q4_k, s::dequantize_row_q4_K, tt::q8_k);
    set_vec_dot<s::vec_dot_q4_K>(table, tt::q4_k);
    set(tt::q5_k, s::dequantize_row_q5_K, tt::q8_k);
    set_vec_dot<s::vec_dot_q5_K>(table, tt::q5_k);
    set(tt::q6_k, s::dequantize_row_q6_K, tt::q8_k);
    set_vec_dot<s::vec_dot_q6_K>(table, tt::q6_k);
    set(tt::iq4_xs, s::dequantize_row_iq4_xs, tt::q8_k);
    set_vec_dot<s::vec_dot_iq4_xs>(table, tt::iq4_xs);
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
