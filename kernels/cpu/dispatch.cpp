// Picks implementations from the CPU's features. Adding an op family: give it a table type in
// dispatch.h, add_<family>_<isa>() fillers in the per-ISA files, and a <family>_for(isa) below
// built the same way as quant_kernels_for.
#include "kernels/cpu/dispatch.h"

#include <cassert>
#include <cstdlib>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/quant_variants.h"

namespace hearth::kernels::cpu {
namespace {

std::vector<isa> detect_isas() {
    const cpu_features & f = detected_cpu_features();
    std::vector<isa> out{isa::scalar};
#if defined(__x86_64__) || defined(_M_X64)
    if (f.avx2 && f.fma && f.f16c) out.push_back(isa::avx2);
    if (f.avx2 && f.fma && f.f16c && f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni) out.push_back(isa::avx512_vnni);
#endif
#if defined(__aarch64__)
    if (f.neon) out.push_back(isa::neon);
    if (f.neon && f.dotprod) out.push_back(isa::neon_dotprod);
#endif
    (void)f;
    return out;
}

bool is_available(isa i) {
    for (isa a : available_isas())
        if (a == i) return true;
    return false;
}

quant_kernels build_quant_kernels(isa i) {
    quant_kernels t;
    add_quant_kernels_scalar(t);
    switch (i) {
    case isa::scalar:
        break;
    case isa::avx2:
    case isa::avx512_vnni:
#if defined(__x86_64__) || defined(_M_X64)
        add_quant_kernels_avx2(t);
        if (i == isa::avx512_vnni) add_quant_kernels_avx512_vnni(t);
#endif
        break;
    case isa::neon:
    case isa::neon_dotprod:
#if defined(__aarch64__)
        add_quant_kernels_neon(t);
        if (i == isa::neon_dotprod) add_quant_kernels_neon_dotprod(t);
#endif
        break;
    }
    t.variant = i;
    return t;
}

}  // namespace

std::string_view isa_name(isa i) {
    switch (i) {
    case isa::scalar: return "scalar";
    case isa::avx2: return "avx2";
    case isa::avx512_vnni: return "avx512_vnni";
    case isa::neon: return "neon";
    case isa::neon_dotprod: return "neon_dotprod";
    }
    return "unknown";
}

std::span<const isa> available_isas() {
    static const std::vector<isa> isas = detect_isas();
    return isas;
}

isa choose_isa(std::span<const isa> available, std::string_view cap) {
    for (isa a : available)
        if (isa_name(a) == cap) return a;
    return available.back();
}

isa active_isa() {
    static const isa chosen = [] {
        const char * cap = std::getenv("HEARTH_ISA");
        return choose_isa(available_isas(), cap ? cap : "");
    }();
    return chosen;
}

const quant_kernels & quant_kernels_for(isa i) {
    assert(is_available(i));
    (void)is_available;
    static const quant_kernels scalar = build_quant_kernels(isa::scalar);
    switch (i) {
    case isa::scalar: return scalar;
    case isa::avx2: { static const quant_kernels t = build_quant_kernels(isa::avx2); return t; }
    case isa::avx512_vnni: { static const quant_kernels t = build_quant_kernels(isa::avx512_vnni); return t; }
    case isa::neon: { static const quant_kernels t = build_quant_kernels(isa::neon); return t; }
    case isa::neon_dotprod: { static const quant_kernels t = build_quant_kernels(isa::neon_dotprod); return t; }
    }
    return scalar;
}

const quant_kernels & active_quant_kernels() {
    static const quant_kernels & active = quant_kernels_for(active_isa());
    return active;
}

}  // namespace hearth::kernels::cpu
