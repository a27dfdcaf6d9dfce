#include "kernels/cpu/cpu_features.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace hearth::kernels::cpu {
namespace {

cpu_features detect() {
    cpu_features f;
#if defined(__x86_64__) || defined(_M_X64)
    __builtin_cpu_init();
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.f16c = __builtin_cpu_supports("f16c");
    f.bmi2 = __builtin_cpu_supports("bmi2");
#elif defined(__aarch64__)
    f.neon = true;   // Advanced SIMD is mandatory in ARMv8-A
#if defined(__linux__)
    const unsigned long hw = getauxval(AT_HWCAP);
    f.dotprod = (hw & (1ul << 20)) != 0;   // HWCAP_ASIMDDP
    f.fp16 = (hw & (1ul << 10)) != 0;      // HWCAP_ASIMDHP
#elif defined(__APPLE__)
    f.dotprod = true;   // every Apple arm64 core (M1 and later) has both
    f.fp16 = true;
#endif
#endif
    return f;
}

}  // namespace

const cpu_features & detected_cpu_features() {
    static const cpu_features features = detect();
    return features;
}

}  // namespace hearth::kernels::cpu
