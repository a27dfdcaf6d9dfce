// Plain ARMv8 NEON quant kernels: the integer dot step widens with vmull_s8 and pairwise adds.
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/quant_variants.h"
#include "kernels/cpu/arm/quant_neon_impl.h"

namespace hearth::kernels::cpu {
namespace {

struct widening_dot {
    static int32x4_t step(int32x4_t acc, int8x16_t a, int8x16_t b) {
        const int16x8_t lo = vmull_s8(vget_low_s8(a), vget_low_s8(b));
        const int16x8_t hi = vmull_high_s8(a, b);
        return vaddq_s32(acc, vaddq_s32(vpaddlq_s16(lo), vpaddlq_s16(hi)));
    }
};

}  // namespace

void add_quant_kernels_neon(quant_kernels & table) {
    neon::add_dots<widening_dot>(table);
    add_quant_conversions_neon(table);
    set_vec_dot<neon::dot_float<neon::f32_load>>(table, tensor_type::f32);
    set_vec_dot<neon::dot_float<neon::f16_load>>(table, tensor_type::f16);
    set_vec_dot<neon::dot_float<neon::bf16_load>>(table, tensor_type::bf16);
}

}  // namespace hearth::kernels::cpu
