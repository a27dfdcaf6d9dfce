// AVX-512 VNNI versions (256-bit, with AVX512BW/VL) of the block kernels against q8_0
// activations: vpdpbusd sums products by four into int32 lanes in one instruction where AVX2
// needs maddubs + madd; q4_0 and q5_0 weights enter it unsigned (no sign instructions), q5_0's
// fifth bits as one masked move instead of shuffle, or and compare. Same int32 lanes and the
// same float steps as the AVX2 kernels (quant_q8_0_tiles.h), so bit-identical to them (tested).
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni (kernels/CMakeLists.txt); used
// only where the CPU has all four (kernels/cpu/dispatch.cpp).
#include <cstring>

#include "kernels/cpu/quant_variants.h"
#include "kernels/cpu/x86/quant_q8_0_tiles.h"
#include "kernels/cpu/x86/quant_unsigned.h"

namespace hearth::kernels::cpu::avx2 {
namespace {

struct vnni_dot {
    static __m256i dot(__m256i ax, __m256i sy) { return _mm256_dpbusd_epi32(_mm256_setzero_si256(), ax, sy); }
};
struct vnni_dot_from {
    static __m256i dot(__m256i start, __m256i ux, __m256i sy) { return _mm256_dpbusd_epi32(start, ux, sy); }
};

// q5_0's weights unsigned for quant_unsigned.h: the fifth bits as one masked move.
struct q5_0_unsigned {
    using block = block_q5_0;
    static constexpr char offset = 16;
    static constexpr int matvec_prefetch = k_nibble_matvec_prefetch;
    static constexpr int matvec_rows = k_nibble_matvec_rows;
    static __m256i load(const block & b) {
        uint32_t qh;
        std::memcpy(&qh, b.qh, sizeof qh);
        const __m256i hi = _mm256_maskz_mov_epi8(static_cast<__mmask32>(qh), _mm256_set1_epi8(0x10));
        return _mm256_or_si256(bytes_from_nibbles(b.qs), hi);
    }
};

// q8_0's weights unsigned for quant_unsigned.h (VNNI only: x + 128 against y overflows AVX2's
// 16-bit maddubs pairs): the sign bit flipped, 128 taken off through the offset lanes.
struct q8_0_unsigned {
    using block = block_q8_0;
    static constexpr char offset = static_cast<char>(-128);   // the byte 0x80: 128 unsigned
    static constexpr int matvec_prefetch = 0;
    static constexpr int matvec_rows = 4;
    static __m256i load(const block & b) {
        return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(b.qs)), _mm256_set1_epi8(static_cast<char>(0x80)));
    }
};

template <class L>
float vnni_row(int64_t n, const void * w, const void * a) {
    return dot_q8_0_row<L, vnni_dot>(n, w, a);
}
template <class L>
void vnni_rows(int64_t n, const void * w, size_t stride, const void * a, float * out, int64_t n_rows) {
    dot_q8_0_multi<L, vnni_dot>(n, w, stride, a, out, n_rows);
}
template <class L>
void vnni_tiles(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride, int64_t n_tokens,
                float * out, int64_t out_stride) {
    dot_q8_0_tiles<L, vnni_dot>(n, w, w_stride, n_rows, a, a_stride, n_tokens, out, out_stride);
}

}  // namespace
}  // namespace hearth::kernels::cpu::avx2

namespace hearth::kernels::cpu {

void add_quant_kernels_avx512_vnni(quant_kernels & table) {
    using tt = tensor_type;
    using namespace avx2;
    using d = vnni_dot_from;
    // Prefill tiles of 4 rows x 5 tokens (q5_0 through matmul, one thread: 4 x 5 141-143, 4 x 6 136-139,
    // 4 x 7 122-127 GFLOP/s). q8_0's prefill takes them too, unsigned (the same int32 lanes as
    // its signed 2-row tiles: 128 x 896 x 512 tokens 92 -> 149 GFLOP/s).
    set_vec_dot<unsigned_row<q4_0_unsigned, d>, unsigned_rows<q4_0_unsigned, d>, unsigned_tiles<q4_0_unsigned, d, 4, 5>>(table, tt::q4_0);
    set_vec_dot<unsigned_row<q5_0_unsigned, d>, unsigned_rows<q5_0_unsigned, d>, unsigned_tiles<q5_0_unsigned, d, 4, 5>>(table, tt::q5_0);
    set_vec_dot<vnni_row<q8_0_load>, unsigned_rows<q8_0_unsigned, d>, unsigned_tiles<q8_0_unsigned, d, 4, 5>>(table, tt::q8_0);
    set_vec_dot<vnni_row<iq4_nl_load>, vnni_rows<iq4_nl_load>, vnni_tiles<iq4_nl_load>>(table, tt::iq4_nl);
    add_kquant_kernels_avx512_vnni(table);
}

}  // namespace hearth::kernels::cpu
