// Registers the AVX2 quant kernels over the scalar table (entries not listed stay scalar).
#include "kernels/cpu/quant_variants.h"
#include "kernels/cpu/x86/quant_avx2.h"

namespace hearth::kernels::cpu {

void add_quant_kernels_avx2(quant_kernels & table) {
    using tt = tensor_type;
    set_vec_dot<avx2::vec_dot_q4_0, avx2::vec_dot_rows_q4_0, avx2::vec_dot_tile_q4_0>(table, tt::q4_0);
    set_vec_dot<avx2::vec_dot_q5_0, avx2::vec_dot_rows_q5_0, avx2::vec_dot_tile_q5_0>(table, tt::q5_0);
    set_vec_dot<avx2::vec_dot_q8_0, avx2::vec_dot_rows_q8_0, avx2::vec_dot_tile_q8_0>(table, tt::q8_0);
    set_vec_dot<avx2::vec_dot_iq4_nl, avx2::vec_dot_rows_iq4_nl, avx2::vec_dot_tile_iq4_nl>(table, tt::iq4_nl);
    set_vec_dot<avx2::vec_dot_q4_1>(table, tt::q4_1);
    set_vec_dot<avx2::vec_dot_q5_1>(table, tt::q5_1);
    set_vec_dot<avx2::vec_dot_f32>(table, tt::f32);
    set_vec_dot<avx2::vec_dot_f16>(table, tt::f16);
    set_vec_dot<avx2::vec_dot_bf16>(table, tt::bf16);
    set_vec_dot<avx2::vec_dot_q2_K>(table, tt::q2_k);
    set_vec_dot<avx2::vec_dot_q3_K>(table, tt::q3_k);
    set_vec_dot<avx2::vec_dot_q4_K, vec_dot_rows_by_row<avx2::vec_dot_q4_K>, avx2::vec_dot_tile_q4_K>(table, tt::q4_k);
    set_vec_dot<avx2::vec_dot_q5_K>(table, tt::q5_k);
    set_vec_dot<avx2::vec_dot_q6_K, vec_dot_rows_in_halves<avx2::vec_dot_q6_K>, avx2::vec_dot_tile_q6_K>(table, tt::q6_k);
    table[tt::q4_k].tile_batch_order = table[tt::q6_k].tile_batch_order = true;
    set_vec_dot<avx2::vec_dot_iq4_xs>(table, tt::iq4_xs);

    table[tt::q8_0].quantize_row = avx2::quantize_row_q8_0;
    table[tt::q8_1].quantize_row = avx2::quantize_row_q8_1;
    table[tt::q8_k].quantize_row = avx2::quantize_row_q8_K;
    table[tt::f16].quantize_row = avx2::quantize_row_f16;
    table[tt::f16].dequantize_row = avx2::dequantize_row_f16;
    table[tt::q8_0].dequantize_row = avx2::dequantize_row_q8_0;
    table[tt::q4_0].dequantize_row = avx2::dequantize_row_q4_0;
}

}  // namespace hearth::kernels::cpu
