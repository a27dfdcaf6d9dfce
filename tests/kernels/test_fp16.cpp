// kernels/fp16.h against independent references: every half round-trips, f32 -> f16 picks the
// nearest half (ties to even) by a search over all halves, NaNs keep their payload bits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/fp16.h"

using namespace hearth::kernels;

TEST_CASE("fp16_to_fp32: exact for every half, payload-preserving for NaNs", "[kernels][fp16]") {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = fp16_to_fp32(static_cast<uint16_t>(h));
        const bool is_nan = (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0;
        INFO("half 0x" << std::hex << h);
        if (is_nan) {
            REQUIRE(std::isnan(f));
            REQUIRE(((f32_bits(f) >> 13) & 0x3FF) == (h & 0x3FF));   // payload, signalling bit included
            REQUIRE((f32_bits(f) >> 31) == (h >> 15));
        } else {
            // value = (-1)^s * 2^(e-15) * (1 + m/1024), or 2^-14 * m/1024 for subnormals
            const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
            const double mag = e == 0x1F ? INFINITY : e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
            REQUIRE(static_cast<double>(f) == ((h & 0x8000) ? -mag : mag));
        }
        REQUIRE(fp32_to_fp16(f) == h);   // every half survives the round trip, NaNs included
    }
}

TEST_CASE("fp32_to_fp16: nearest half, ties to even, over a sweep of all floats", "[kernels][fp16]") {
    std::vector<double> halves;   // the finite non-negative halves, ascending (bits 0 .. 0x7BFF)
    for (uint32_t h = 0; h <= 0x7BFF; ++h) halves.push_back(static_cast<double>(fp16_to_fp32(static_cast<uint16_t>(h))));
    uint64_t n_bad = 0, first_bad = 0;
    uint16_t first_got = 0, first_want = 0;
    for (uint64_t u = 0; u < (1ull << 32); u += 997) {   // 4.3 million floats of every class
        const float x = f32_from_bits(static_cast<uint32_t>(u));
        if (std::isnan(x)) continue;
        const uint16_t got = fp32_to_fp16(x);
        const double ax = std::fabs(static_cast<double>(x));
        uint16_t want;
        if (ax >= 65520.0) {
            want = 0x7C00;   // at or past the midpoint of 65504 and 2^16: Inf
        } else {
            const auto it = std::lower_bound(halves.begin(), halves.end(), ax);
            const auto hi = static_cast<uint16_t>(it - halves.begin());
            if (it == halves.end()) {
                want = 0x7BFF;   // between 65504 and the Inf midpoint
            } else if (halves[hi] == ax) {
                want = hi;
            } else {
                const auto lo = static_cast<uint16_t>(hi - 1);
                const double dlo = ax - halves[lo], dhi = halves[hi] - ax;
                want = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1) == 0 ? lo : hi);
            }
        }
        want = static_cast<uint16_t>(want | (std::signbit(x) ? 0x8000 : 0));
        if (got != want && n_bad++ == 0) {
            first_bad = u;
            first_got = got;
            first_want = want;
        }
    }
    INFO("first mismatch: float bits 0x" << std::hex << first_bad << " gave 0x" << first_got << ", want 0x" << first_want);
    CHECK(n_bad == 0);
}

TEST_CASE("bf16: exact widening, round to nearest even, NaNs stay NaN", "[kernels][fp16]") {
    for (uint32_t h = 0; h < 65536; ++h) REQUIRE(f32_bits(bf16_to_fp32(static_cast<uint16_t>(h))) == h << 16);
    CHECK(fp32_to_bf16(f32_from_bits(0x3F808000)) == 0x3F80);   // tie, even stays
    CHECK(fp32_to_bf16(f32_from_bits(0x3F818000)) == 0x3F82);   // tie, odd rounds up
    CHECK(fp32_to_bf16(f32_from_bits(0x3F808001)) == 0x3F81);
    CHECK(fp32_to_bf16(f32_from_bits(0x7F800001)) == 0x7FC0);   // signalling NaN with a low payload: quiet NaN
    CHECK(fp32_to_bf16(f32_from_bits(0x7F7FFFFF)) == 0x7F80);   // max float rounds to Inf
}
