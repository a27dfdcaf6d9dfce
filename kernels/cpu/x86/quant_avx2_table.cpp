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
    dot(tt::q4_0, avx2::vec_dot_q4_0, vec_dot_rows_by_row<avx2::vec_dot_q4_0>);
    dot(tt::q5_0, avx2::vec_dot_q5_0, vec_dot_rows_by_row<avx2::vec_dot_q5_0>);
    dot(tt::q8_0, avx2::vec_dot_q8_0, vec_dot_rows_by_row<avx2::vec_dot_q8_0>);
    dot(tt::iq4_nl, avx2::vec_dot_iq4_nl, vec_dot_rows_by_row<avx2::vec_dot_iq4_nl>);
}

}  // namespace hearth::kernels::cpu
