#include "kernels/cpu/cpu_features.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif
#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace hearth::kernels::cpu {
namespace {

cpu_features detect() {
    cpu_features f;
#if defined(__x86_64__)
    // CPUID directly: clang's __builtin_cpu_supports does not know "f16c", and the OS must
    // also save the YMM registers (OSXSAVE + XCR0) for any AVX path to be usable.
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    const bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    bool ymm_saved = false, zmm_saved = false;
    if (osxsave) {
        unsigned lo = 0, hi = 0;
        __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        ymm_saved = (lo & 0x6) == 0x6;
        zmm_saved = (lo & 0xE6) == 0xE6;   // and the opmask and ZMM registers
    }
    const bool avx_ok = avx && ymm_saved;
    f.fma = avx_ok && ((c >> 12) & 1);
    f.f16c = avx_ok && ((c >> 29) & 1);
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        f.avx2 = avx_ok && ((b >> 5) & 1);
        f.bmi2 = (b >> 8) & 1;
        const bool avx512_ok = avx_ok && zmm_saved;
        f.avx512f = avx512_ok && ((b >> 16) & 1);
        f.avx512bw = avx512_ok && ((b >> 30) & 1);
        f.avx512vl = avx512_ok && ((b >> 31) & 1);
        f.avx512vnni = avx512_ok && ((c >> 11) & 1);
    }
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
