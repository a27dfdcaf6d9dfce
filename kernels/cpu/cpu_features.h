// What the CPU we run on can do, detected once (x86: cpuid via __builtin_cpu_supports;
// aarch64 Linux: getauxval(AT_HWCAP)). Only kernels/cpu/dispatch.cpp should act on it.
// Thread-safety: detection runs once (a function-local static); the result is immutable.
#pragma once

namespace hearth::kernels::cpu {

struct cpu_features {
    // x86-64
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool bmi2 = false;
    bool avx512f = false, avx512bw = false, avx512vl = false, avx512vnni = false;   // with the OS saving ZMM state
    // aarch64
    bool neon = false;
    bool dotprod = false;   // SDOT/UDOT (ARMv8.2 dotprod)
    bool fp16 = false;      // half-precision arithmetic (ARMv8.2 fp16)
};

const cpu_features & detected_cpu_features();

}  // namespace hearth::kernels::cpu
