// The core's int8 multiply-add peak: independent chains of the instructions the prefill tiles
// are built from, on register-resident operands (no loads), so nothing but the vector pipes
// bounds them. Defined in x86/int8_peak_*.cpp, each built with its own ISA flags; call one only
// where kernels/cpu/dispatch.h lists that ISA.
#pragma once

#include <cstdint>

namespace hearth::bench {

// Each returns a sum of its accumulators (so the work cannot be dropped) after n_iters rounds;
// a round is k_int8_peak_macs_per_iter_* multiply-adds (u8 x s8, summed into int32).
// vpdpbusd's latency is on the accumulator: 16 chains cover it at two instructions a cycle.
inline constexpr int64_t k_int8_peak_chains_avx512 = 16;
inline constexpr int64_t k_int8_peak_macs_per_iter_avx512 = k_int8_peak_chains_avx512 * 64;
// The AVX2 chain is one vpaddd deep; each chain has its own operand so that the products are
// not shared (4 chains: accumulators, operands and products fit the 16 ymm registers).
inline constexpr int64_t k_int8_peak_chains_avx2 = 4;
inline constexpr int64_t k_int8_peak_macs_per_iter_avx2 = k_int8_peak_chains_avx2 * 32;

int32_t int8_peak_avx512_vnni(int64_t n_iters);
// vpmaddubsw, vpmaddwd by ones, vpaddd: the AVX2 tiles' sequence for 32 multiply-adds.
int32_t int8_peak_avx2(int64_t n_iters);

}  // namespace hearth::bench
