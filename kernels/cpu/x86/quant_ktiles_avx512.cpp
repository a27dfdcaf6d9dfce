// AVX-512 VNNI q4_K and q6_K dot products (quant_ktiles.h): vpdpwssd adds the scale x pair
// products into the int32 lanes in one instruction where AVX2 needs madd + add. The same
// integers and the same float steps, so bit-identical to the AVX2 kernels (tested).
// Compiled with AVX-512 VNNI flags (kernels/CMakeLists.txt); used only where the CPU has them.
#include "kernels/cpu/quant_variants.h"
#include "kernels/cpu/x86/quant_ktiles.h"
#include "kernels/cpu/x86/quant_q4_K_sublanes.h"
#include "kernels/cpu/x86/quant_q6_K_sublanes.h"

namespace hearth::kernels::cpu {
namespace {

struct madd_vnni {
    static __m256i madd_add(__m256i acc, __m256i scales, __m256i pairs) { return _mm256_dpwssd_epi32(acc, scales, pairs); }
};
using kernels_vnni = avx2::k_kernels<madd_vnni>;

}  // namespace

void add_kquant_kernels_avx512_vnni(quant_kernels & table) {
    using tt = tensor_type;
    set_vec_dot<kernels_vnni::vec_dot_q4_K, vec_dot_rows_by_row<kernels_vnni::vec_dot_q4_K>,
                avx2::q4_K_sublane_tiles<madd_vnni>>(table, tt::q4_k);
    set_vec_dot<kernels_vnni::vec_dot_q6_K, vec_dot_rows_in_halves<kernels_vnni::vec_dot_q6_K>, avx2::q6_K_sublane_tiles>(table,
                                                                                                                   tt::q6_k);
}

}  // namespace hearth::kernels::cpu
