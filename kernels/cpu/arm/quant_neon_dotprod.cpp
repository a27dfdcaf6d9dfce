// ARMv8.2 quant kernels: the integer dot step is one SDOT (4 int8 products per int32 lane).
// Built with -march=armv8.2-a+dotprod+fp16; registered only when the CPU reports dotprod.
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/quant_variants.h"
#include "kernels/cpu/arm/quant_neon_impl.h"

namespace hearth::kernels::cpu {
namespace {

struct sdot_dot {
    static int32x4_t step(int32x4_t acc, int8x16_t a, int8x16_t b) { return vdotq_s32(acc, a, b); }
};

}  // namespace

void add_quant_kernels_neon_dotprod(quant_kernels & table) { neon::add_dots<sdot_dot>(table); }

}  // namespace hearth::kernels::cpu
