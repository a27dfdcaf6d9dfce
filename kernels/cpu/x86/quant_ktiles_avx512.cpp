// AVX-512 VNNI q4_K and q6_K dot products: one token (quant_ktiles.h) with vpdpwssd adding the
// scale x pair products into the int32 lanes in one instruction where AVX2 needs madd + add;
// prefill by row lanes (quant_row_groups.h). The same integers and the same float steps, so
// bit-identical to the AVX2 kernels (tested).
// Compiled with AVX-512 VNNI flags (kernels/CMakeLists.txt); used only where the CPU has them.
// GCC 12's AVX-512 intrinsics initialise their undefined registers from themselves and warn
// about it wherever they are inlined (GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "kernels/cpu/quant_variants.h"
#include "kernels/cpu/x86/quant_ktiles.h"
#include "kernels/cpu/x86/quant_row_groups.h"

namespace hearth::kernels::cpu {
namespace {

struct madd_vnni {
    static __m256i madd_add(__m256i acc, __m256i scales, __m256i pairs) { return _mm256_dpwssd_epi32(acc, scales, pairs); }
};
using kernels_vnni = avx2::k_kernels<madd_vnni>;

}  // namespace

void add_kquant_kernels_avx512_vnni(quant_kernels & table) {
    using tt = tensor_type;
    using namespace avx2;
    // Prefill by row lanes (quant_row_groups.h); the one-token dots as on AVX2, with vpdpwssd.
    set_vec_dot<kernels_vnni::vec_dot_q4_K, vec_dot_rows_by_row<kernels_vnni::vec_dot_q4_K>,
                row_group_tiles<q4_K_rows>>(table, tt::q4_k);
    set_vec_dot<kernels_vnni::vec_dot_q6_K, vec_dot_rows_in_halves<kernels_vnni::vec_dot_q6_K>,
                row_group_tiles<q6_K_rows>>(table, tt::q6_k);
    table[tt::q4_k].tile_repacks_rows = table[tt::q6_k].tile_repacks_rows = true;
}

}  // namespace hearth::kernels::cpu
