// The dispatch tables: which variants exist, that every table is complete, the HEARTH_ISA cap.
#include <catch2/catch.hpp>

#include <set>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/dispatch.h"

using namespace hearth::kernels;
using cpu::isa;

TEST_CASE("available_isas: scalar first, no repeats, the active one among them", "[kernels][dispatch]") {
    const auto isas = cpu::available_isas();
    REQUIRE(!isas.empty());
    CHECK(isas.front() == isa::scalar);
    std::set<isa> seen(isas.begin(), isas.end());
    CHECK(seen.size() == isas.size());
    CHECK(seen.count(cpu::active_isa()) == 1);
    const auto & f = cpu::detected_cpu_features();
#if defined(__x86_64__)
    CHECK(seen.count(isa::avx2) == (f.avx2 && f.fma && f.f16c ? 1u : 0u));
    CHECK(seen.count(isa::avx512_vnni) ==
          (f.avx2 && f.fma && f.f16c && f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni ? 1u : 0u));
#elif defined(__aarch64__)
    CHECK(seen.count(isa::neon) == 1);
    CHECK(seen.count(isa::neon_dotprod) == (f.dotprod ? 1u : 0u));
#endif
    for (isa i : isas) INFO("available: " << cpu::isa_name(i));
}

TEST_CASE("every variant's table is complete where the scalar one is", "[kernels][dispatch]") {
    const auto & ref = cpu::quant_kernels_for(isa::scalar);
    for (isa i : cpu::available_isas()) {
        const auto & k = cpu::quant_kernels_for(i);
        CHECK(k.variant == i);
        for (uint32_t raw = 0; raw < cpu::k_n_tensor_types; ++raw) {
            INFO("isa " << cpu::isa_name(i) << ", type " << tensor_type_info(raw).name);
            const auto t = static_cast<tensor_type>(raw);
            CHECK((k[t].dequantize_row != nullptr) == (ref[t].dequantize_row != nullptr));
            CHECK((k[t].quantize_row != nullptr) == (ref[t].quantize_row != nullptr));
            CHECK((k[t].vec_dot != nullptr) == (ref[t].vec_dot != nullptr));
            CHECK((k[t].vec_dot_rows != nullptr) == (ref[t].vec_dot != nullptr));
            CHECK((k[t].vec_dot_tile != nullptr) == (ref[t].vec_dot != nullptr));
            CHECK(k[t].vec_dot_type == ref[t].vec_dot_type);
            // A weight type's activations must be quantizable by the same variant.
            if (k[t].vec_dot) CHECK(k[k[t].vec_dot_type].quantize_row != nullptr);
        }
    }
}

TEST_CASE("choose_isa: the best by default, a named available one as a cap", "[kernels][dispatch]") {
    const isa both[] = {isa::scalar, isa::avx2};
    CHECK(cpu::choose_isa(both, "") == isa::avx2);
    CHECK(cpu::choose_isa(both, "scalar") == isa::scalar);
    CHECK(cpu::choose_isa(both, "neon") == isa::avx2);      // not available: ignored
    CHECK(cpu::choose_isa(both, "AVX512") == isa::avx2);    // unknown: ignored
    const isa arm[] = {isa::scalar, isa::neon, isa::neon_dotprod};
    CHECK(cpu::choose_isa(arm, "neon") == isa::neon);
    CHECK(cpu::isa_name(isa::neon_dotprod) == "neon_dotprod");
}
