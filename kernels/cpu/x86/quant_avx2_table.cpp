// Registers the AVX2 quant kernels over the scalar table (entries not listed stay scalar).
#include "kernels/cpu/quant_variants.h"
#include "kernels/cpu/x86/quant_avx2.h"

namespace hearth::kernels::cpu {

void add_quant_kernels_avx2(quant_kernels & table) {
    using tt = tensor_type;
    auto dot = [&](tt t, vec_dot_fn fn, vec_dot_rows_fn rows) {
        table[t].vec_dot = fn;
        table[t].vec_dot_rows = rows;
    };
    dot(tt::q4_0, avx2::vec_dot_q4_0, avx2::vec_dot_rows_q4_0);
    dot(tt::q5_0, avx2::vec_dot_q5_0, avx2::vec_dot_rows_q5_0);
    dot(tt::q8_0, avx2::vec_dot_q8_0, avx2::vec_dot_rows_q8_0);
    dot(tt::iq4_nl, avx2::vec_dot_iq4_nl, avx2::vec_dot_rows_iq4_nl);
    dot(tt::q4_1, avx2::vec_dot_q4_1, vec_dot_rows_by_row<avx2::vec_dot_q4_1>);
    dot(tt::q5_1, avx2::vec_dot_q5_1, vec_dot_rows_by_row<avx2::vec_dot_q5_1>);
    dot(tt::f32, avx2::vec_dot_f32, vec_dot_rows_by_row<avx2::vec_dot_f32>);
    dot(tt::f16, avx2::vec_dot_f16, vec_dot_rows_by_row<avx2::vec_dot_f16>);
    dot(tt::bf16, avx2::vec_dot_bf16, vec_dot_rows_by_row<avx2::vec_dot_bf16>);
    dot(tt::q2_k, avx2::vec_dot_q2_K, vec_dot_rows_by_row<avx2::vec_dot_q2_K>);
    dot(tt::q3_k, avx2::vec_dot_q3_K, vec_dot_rows_by_row<avx2::vec_dot_q3_K>);
    dot(tt::q4_k, avx2::vec_dot_q4_K, vec_dot_rows_by_row<avx2::vec_dot_q4_K>);
    dot(tt::q5_k, avx2::vec_dot_q5_K, vec_dot_rows_by_row<avx2::vec_dot_q5_K>);
    dot(tt::q6_k, avx2::vec_dot_q6_K, vec_dot_rows_by_row<avx2::vec_dot_q6_K>);
    dot(tt::iq4_xs, avx2::vec_dot_iq4_xs, vec_dot_rows_by_row<avx2::vec_dot_iq4_xs>);

    table[tt::q8_0].quantize_row = avx2::quantize_row_q8_0;
    table[tt::q8_1].quantize_row = avx2::quantize_row_q8_1;
    table[tt::q8_k].quantize_row = avx2::quantize_row_q8_K;
    table[tt::f16].quantize_row = avx2::quantize_row_f16;
    table[tt::f16].dequantize_row = avx2::dequantize_row_f16;
    table[tt::q8_0].dequantize_row = avx2::dequantize_row_q8_0;
    table[tt::q4_0].dequantize_row = avx2::dequantize_row_q4_0;
}

}  // namespace hearth::kernels::cpu
