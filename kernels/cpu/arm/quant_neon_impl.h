// NEON dot products of every weight format, written once over the 16-byte integer dot step
// `Dot::step(acc, a, b)` (acc[lane] += sum of 4 int8 products): plain ARMv8 NEON widens with
// vmull_s8 (quant_neon.cpp), ARMv8.2 uses SDOT (quant_neon_dotprod.cpp). Block sums are exact
// int32 either way, so both variants give identical results; blocks are scaled in f32 as in the
// scalar reference.
// Everything here has internal linkage (unnamed namespace): each ISA-flagged .cpp includes this
// once and gets its own copy, so no out-of-line function compiled for SDOT can be shared with the
// plain NEON file through the linker.
// Thread-safety: pure functions.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/quant_variants.h"
#include "kernels/fp16.h"

namespace hearth::kernels::cpu::neon {
namespace {

inline int32_t hsum_i32(int32x4_t v) { return vaddvq_s32(v); }

inline int8x16_t s8(uint8x16_t v) { return vreinterpretq_s8_u8(v); }

// 0xFF in byte i where bit i of the 16-bit mask is set.
inline uint8x16_t bits_to_bytes(uint32_t bits16) {
    static const uint8_t k_bit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t v = vcombine_u8(vdup_n_u8(static_cast<uint8_t>(bits16)), vdup_n_u8(static_cast<uint8_t>(bits16 >> 8)));
    return vtstq_u8(v, vld1q_u8(k_bit));
}

inline uint32_t load_u32(const uint8_t * p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// --- loaders: the 32 weights of one block as two int8x16 ------------------------------------
struct q4_0_load {
    using block = block_q4_0;
    static void load(const block & b, int8x16_t & x0, int8x16_t & x1) {
        const uint8x16_t bits = vld1q_u8(b.qs);
        x0 = vsubq_s8(s8(vandq_u8(bits, vdupq_n_u8(0x0F))), vdupq_n_s8(8));
        x1 = vsubq_s8(s8(vshrq_n_u8(bits, 4)), vdupq_n_s8(8));
    }
};
struct q5_0_load {
    using block = block_q5_0;
    static void load(const block & b, int8x16_t & x0, int8x16_t & x1) {
        const uint32_t qh = load_u32(b.qh);
        const uint8x16_t bits = vld1q_u8(b.qs);
        const uint8x16_t h0 = vandq_u8(bits_to_bytes(qh & 0xFFFF), vdupq_n_u8(0x10));
        const uint8x16_t h1 = vandq_u8(bits_to_bytes(qh >> 16), vdupq_n_u8(0x10));
        x0 = vsubq_s8(s8(vorrq_u8(vandq_u8(bits, vdupq_n_u8(0x0F)), h0)), vdupq_n_s8(16));
        x1 = vsubq_s8(s8(vorrq_u8(vshrq_n_u8(bits, 4), h1)), vdupq_n_s8(16));
    }
};
struct q8_0_load {
    using block = block_q8_0;
    static void load(const block & b, int8x16_t & x0, int8x16_t & x1) {
        x0 = vld1q_s8(b.qs);
        x1 = vld1q_s8(b.qs + 16);
    }
};
struct iq4_nl_load {
    using block = block_iq4_nl;
    static void load(const block & b, int8x16_t & x0, int8x16_t & x1) {
        const int8x16_t values = vld1q_s8(k_iq4nl_values);
        const uint8x16_t bits = vld1q_u8(b.qs);
        x0 = vqtbl1q_s8(values, vandq_u8(bits, vdupq_n_u8(0x0F)));
        x1 = vqtbl1q_s8(values, vshrq_n_u8(bits, 4));
    }
};
struct q4_1_load {
    using block = block_q4_1;
    static void load(const block & b, int8x16_t & x0, int8x16_t & x1) {
        const uint8x16_t bits = vld1q_u8(b.qs);
        x0 = s8(vandq_u8(bits, vdupq_n_u8(0x0F)));
        x1 = s8(vshrq_n_u8(bits, 4));
    }
};
struct q5_1_load {
    using block = block_q5_1;
    static void load(const block & b, int8x16_t & x0, int8x16_t & x1) {
        const uint32_t qh = load_u32(b.qh);
        const uint8x16_t bits = vld1q_u8(b.qs);
        x0 = s8(vorrq_u8(vandq_u8(bits, vdupq_n_u8(0x0F)), vandq_u8(bits_to_bytes(qh & 0xFFFF), vdupq_n_u8(0x10))));
        x1 = s8(vorrq_u8(vshrq_n_u8(bits, 4), vandq_u8(bits_to_bytes(qh >> 16), vdupq_n_u8(0x10))));
    }
};

// Lane-wise partial sums of a 32-element integer dot product (summed across lanes by the caller,
// once per block: per-sub-block scales are applied to the vector, not after a horizontal add).
template <class Dot>
inline int32x4_t dot32v(const int8x16_t x0, const int8x16_t x1, const int8_t * y) {
    return Dot::step(Dot::step(vdupq_n_s32(0), x0, vld1q_s8(y)), x1, vld1q_s8(y + 16));
}

// One weight row against T q8_0 activation rows (T = 1 is vec_dot): the block is unpacked once
// for all tokens, and each token runs the f32 operations of the one-token case (same bits).
template <class Dot, class L, int T>
void tile_q8_0(int64_t n, const typename L::block * x, const uint8_t * a, size_t a_stride, float * out, int64_t out_stride) {
    float32x4_t acc[T];
    for (int t = 0; t < T; ++t) acc[t] = vdupq_n_f32(0.0f);
    for (int64_t i = 0; i < n / 32; ++i) {
        int8x16_t x0, x1;
        L::load(x[i], x0, x1);
        const float dx = fp16_to_fp32(x[i].d);
        for (int t = 0; t < T; ++t) {
            const block_q8_0 & y = reinterpret_cast<const block_q8_0 *>(a + t * a_stride)[i];
            const int32x4_t p = Dot::step(Dot::step(vdupq_n_s32(0), x0, vld1q_s8(y.qs)), x1, vld1q_s8(y.qs + 16));
            acc[t] = vfmaq_n_f32(acc[t], vcvtq_f32_s32(p), dx * fp16_to_fp32(y.d));
        }
    }
    for (int t = 0; t < T; ++t) out[t * out_stride] = vaddvq_f32(acc[t]);
}

template <class Dot, class L>
float dot_q8_0(int64_t n, const void * w, const void * a) {
    float out;
    tile_q8_0<Dot, L, 1>(n, static_cast<const typename L::block *>(w), static_cast<const uint8_t *>(a), 0, &out, 1);
    return out;
}

template <class Dot, class L>
float dot_q8_1(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const typename L::block *>(w);
    const auto * y = static_cast<const block_q8_1 *>(a);
    float32x4_t acc = vdupq_n_f32(0.0f);
    float summs = 0.0f;
    for (int64_t i = 0; i < n / 32; ++i) {
        int8x16_t x0, x1;
        L::load(x[i], x0, x1);
        summs += fp16_to_fp32(x[i].m) * fp16_to_fp32(y[i].s);
        const int32x4_t p = Dot::step(Dot::step(vdupq_n_s32(0), x0, vld1q_s8(y[i].qs)), x1, vld1q_s8(y[i].qs + 16));
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(p), fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
    }
    return vaddvq_f32(acc) + summs;
}

// --- K-quants -----------------------------------------------------------------------------
// sum over the 8 sub-blocks of 32 of m_j * (q8 sum of sub-block j), from the 16-element bsums.
inline int32_t k_mins_dot(const block_q8_K & y, const uint8_t * mins) {
    int32_t s = 0;
    for (int j = 0; j < 8; ++j) s += mins[j] * (y.bsums[2 * j] + y.bsums[2 * j + 1]);
    return s;
}

template <class Dot, int T>
void tile_q4_K(int64_t n, const block_q4_K * x, const uint8_t * a, size_t a_stride, float * out, int64_t out_stride) {
    const uint8x16_t m4 = vdupq_n_u8(0x0F);
    float sumf[T] = {};
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        uint8_t sc[8], mn[8];
        for (int j = 0; j < 8; ++j) k_scale_min(j, x[i].scales, sc[j], mn[j]);
        const block_q8_K * y[T];
        int32x4_t vsum[T];
        for (int t = 0; t < T; ++t) {
            y[t] = reinterpret_cast<const block_q8_K *>(a + t * a_stride) + i;
            vsum[t] = vdupq_n_s32(0);
        }
        for (int j = 0; j < 4; ++j) {
            const uint8x16_t b0 = vld1q_u8(x[i].qs + 32 * j), b1 = vld1q_u8(x[i].qs + 32 * j + 16);
            const int8x16_t l0 = s8(vandq_u8(b0, m4)), l1 = s8(vandq_u8(b1, m4));
            const int8x16_t h0 = s8(vshrq_n_u8(b0, 4)), h1 = s8(vshrq_n_u8(b1, 4));
            for (int t = 0; t < T; ++t) {
                const int8_t * q8 = y[t]->qs + 64 * j;
                vsum[t] = vmlaq_n_s32(vsum[t], dot32v<Dot>(l0, l1, q8), sc[2 * j]);
                vsum[t] = vmlaq_n_s32(vsum[t], dot32v<Dot>(h0, h1, q8 + 32), sc[2 * j + 1]);
            }
        }
        for (int t = 0; t < T; ++t) {
            const float d = fp16_to_fp32(x[i].d) * y[t]->d;
            const float dmin = fp16_to_fp32(x[i].dmin) * y[t]->d;
            sumf[t] += d * static_cast<float>(hsum_i32(vsum[t])) - dmin * static_cast<float>(k_mins_dot(*y[t], mn));
        }
    }
    for (int t = 0; t < T; ++t) out[t * out_stride] = sumf[t];
}

template <class Dot>
float dot_q4_K(int64_t n, const void * w, const void * a) {
    float out;
    tile_q4_K<Dot, 1>(n, static_cast<const block_q4_K *>(w), static_cast<const uint8_t *>(a), 0, &out, 1);
    return out;
}

template <class Dot>
float dot_q5_K(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q5_K *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    const uint8x16_t m4 = vdupq_n_u8(0x0F);
    const uint8x16_t m16 = vdupq_n_u8(0x10);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        uint8_t sc[8], mn[8];
        for (int j = 0; j < 8; ++j) k_scale_min(j, x[i].scales, sc[j], mn[j]);
        const uint8x16_t h0 = vld1q_u8(x[i].qh), h1 = vld1q_u8(x[i].qh + 16);
        const uint8_t * q5 = x[i].qs;
        const int8_t * q8 = y[i].qs;
        int32x4_t vsum = vdupq_n_s32(0);
        for (int j = 0; j < 4; ++j, q5 += 32, q8 += 64) {
            const uint8x16_t b0 = vld1q_u8(q5), b1 = vld1q_u8(q5 + 16);
            const uint8x16_t ml = vdupq_n_u8(static_cast<uint8_t>(1u << (2 * j)));
            const uint8x16_t mh = vdupq_n_u8(static_cast<uint8_t>(2u << (2 * j)));
            const int8x16_t l0 = s8(vorrq_u8(vandq_u8(b0, m4), vandq_u8(vtstq_u8(h0, ml), m16)));
            const int8x16_t l1 = s8(vorrq_u8(vandq_u8(b1, m4), vandq_u8(vtstq_u8(h1, ml), m16)));
            const int8x16_t u0 = s8(vorrq_u8(vshrq_n_u8(b0, 4), vandq_u8(vtstq_u8(h0, mh), m16)));
            const int8x16_t u1 = s8(vorrq_u8(vshrq_n_u8(b1, 4), vandq_u8(vtstq_u8(h1, mh), m16)));
            vsum = vmlaq_n_s32(vsum, dot32v<Dot>(l0, l1, q8), sc[2 * j]);
            vsum = vmlaq_n_s32(vsum, dot32v<Dot>(u0, u1, q8 + 32), sc[2 * j + 1]);
        }
        const int32_t sumi = hsum_i32(vsum);
        const float d = fp16_to_fp32(x[i].d) * y[i].d;
        const float dmin = fp16_to_fp32(x[i].dmin) * y[i].d;
        sumf += d * static_cast<float>(sumi) - dmin * static_cast<float>(k_mins_dot(y[i], mn));
    }
    return sumf;
}

template <class Dot, int T>
void tile_q6_K(int64_t n, const block_q6_K * x, const uint8_t * a, size_t a_stride, float * out, int64_t out_stride) {
    const uint8x16_t m4 = vdupq_n_u8(0x0F);
    const uint8x16_t m3 = vdupq_n_u8(0x03);
    const int8x16_t m32 = vdupq_n_s8(32);
    float sumf[T] = {};
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const block_q8_K * y[T];
        int32x4_t vsum[T];
        for (int t = 0; t < T; ++t) {
            y[t] = reinterpret_cast<const block_q8_K *>(a + t * a_stride) + i;
            vsum[t] = vdupq_n_s32(0);
        }
        for (int half = 0; half < 2; ++half) {
            const uint8_t * ql = x[i].ql + 64 * half;
            const uint8_t * qh = x[i].qh + 32 * half;
            const int8_t * sc = x[i].scales + 8 * half;
            for (int part = 0; part < 2; ++part) {   // elements l = 16 * part .. 16 * part + 15
                const uint8x16_t lo = vld1q_u8(ql + 16 * part);
                const uint8x16_t hi = vld1q_u8(ql + 32 + 16 * part);
                const uint8x16_t h = vld1q_u8(qh + 16 * part);
                const int8x16_t q1 = vsubq_s8(s8(vorrq_u8(vandq_u8(lo, m4), vshlq_n_u8(vandq_u8(h, m3), 4))), m32);
                const int8x16_t q2 = vsubq_s8(s8(vorrq_u8(vandq_u8(hi, m4), vshlq_n_u8(vandq_u8(vshrq_n_u8(h, 2), m3), 4))), m32);
                const int8x16_t q3 = vsubq_s8(s8(vorrq_u8(vshrq_n_u8(lo, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(h, 4), m3), 4))), m32);
                const int8x16_t q4 = vsubq_s8(s8(vorrq_u8(vshrq_n_u8(hi, 4), vshlq_n_u8(vshrq_n_u8(h, 6), 4))), m32);
                for (int t = 0; t < T; ++t) {
                    const int8_t * y0 = y[t]->qs + 128 * half + 16 * part;
                    vsum[t] = vmlaq_n_s32(vsum[t], Dot::step(vdupq_n_s32(0), q1, vld1q_s8(y0)), sc[part + 0]);
                    vsum[t] = vmlaq_n_s32(vsum[t], Dot::step(vdupq_n_s32(0), q2, vld1q_s8(y0 + 32)), sc[part + 2]);
                    vsum[t] = vmlaq_n_s32(vsum[t], Dot::step(vdupq_n_s32(0), q3, vld1q_s8(y0 + 64)), sc[part + 4]);
                    vsum[t] = vmlaq_n_s32(vsum[t], Dot::step(vdupq_n_s32(0), q4, vld1q_s8(y0 + 96)), sc[part + 6]);
                }
            }
        }
        for (int t = 0; t < T; ++t) sumf[t] += (fp16_to_fp32(x[i].d) * y[t]->d) * static_cast<float>(hsum_i32(vsum[t]));
    }
    for (int t = 0; t < T; ++t) out[t * out_stride] = sumf[t];
}

template <class Dot>
float dot_q6_K(int64_t n, const void * w, const void * a) {
    float out;
    tile_q6_K<Dot, 1>(n, static_cast<const block_q6_K *>(w), static_cast<const uint8_t *>(a), 0, &out, 1);
    return out;
}

template <class Dot>
float dot_q2_K(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q2_K *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    const uint8x16_t m3 = vdupq_n_u8(0x03);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        int32_t summs = 0;
        for (int j = 0; j < 16; ++j) summs += y[i].bsums[j] * (x[i].scales[j] >> 4);
        const uint8_t * q2 = x[i].qs;
        const int8_t * q8 = y[i].qs;
        int32x4_t vsum = vdupq_n_s32(0);
        int is = 0;
        for (int half = 0; half < 2; ++half, q2 += 32) {
            const uint8x16_t b0 = vld1q_u8(q2), b1 = vld1q_u8(q2 + 16);
            for (int shift = 0; shift < 8; shift += 2, q8 += 32) {
                const uint8x16_t v0 = vandq_u8(vshlq_u8(b0, vdupq_n_s8(static_cast<int8_t>(-shift))), m3);
                const uint8x16_t v1 = vandq_u8(vshlq_u8(b1, vdupq_n_s8(static_cast<int8_t>(-shift))), m3);
                vsum = vmlaq_n_s32(vsum, Dot::step(vdupq_n_s32(0), s8(v0), vld1q_s8(q8)), x[i].scales[is++] & 0x0F);
                vsum = vmlaq_n_s32(vsum, Dot::step(vdupq_n_s32(0), s8(v1), vld1q_s8(q8 + 16)), x[i].scales[is++] & 0x0F);
            }
        }
        const int32_t sumi = hsum_i32(vsum);
        const float dall = y[i].d * fp16_to_fp32(x[i].d);
        const float dmin = y[i].d * fp16_to_fp32(x[i].dmin);
        sumf += dall * static_cast<float>(sumi) - dmin * static_cast<float>(summs);
    }
    return sumf;
}

template <class Dot>
float dot_q3_K(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q3_K *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    const uint8x16_t m3 = vdupq_n_u8(0x03);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        int8_t scales[16];
        for (int s = 0; s < 16; ++s) {
            const int low = (s < 8 ? x[i].scales[s] : x[i].scales[s - 8] >> 4) & 0x0F;
            const int high = (x[i].scales[8 + (s % 4)] >> (2 * (s / 4))) & 0x03;
            scales[s] = static_cast<int8_t>((low | (high << 4)) - 32);
        }
        const uint8x16_t hm0 = vld1q_u8(x[i].hmask), hm1 = vld1q_u8(x[i].hmask + 16);
        const uint8_t * q3 = x[i].qs;
        const int8_t * q8 = y[i].qs;
        int32x4_t vsum = vdupq_n_s32(0);
        int is = 0;
        int bit = 0;
        for (int half = 0; half < 2; ++half, q3 += 32) {
            const uint8x16_t b0 = vld1q_u8(q3), b1 = vld1q_u8(q3 + 16);
            for (int shift = 0; shift < 8; shift += 2, ++bit, q8 += 32) {
                const uint8x16_t mb = vdupq_n_u8(static_cast<uint8_t>(1u << bit));
                // q = low 2 bits - 4 where the high bit is clear
                const uint8x16_t sub0 = vandq_u8(vmvnq_u8(vtstq_u8(hm0, mb)), vdupq_n_u8(4));
                const uint8x16_t sub1 = vandq_u8(vmvnq_u8(vtstq_u8(hm1, mb)), vdupq_n_u8(4));
                const int8x16_t v0 = vsubq_s8(s8(vandq_u8(vshlq_u8(b0, vdupq_n_s8(static_cast<int8_t>(-shift))), m3)), s8(sub0));
                const int8x16_t v1 = vsubq_s8(s8(vandq_u8(vshlq_u8(b1, vdupq_n_s8(static_cast<int8_t>(-shift))), m3)), s8(sub1));
                vsum = vmlaq_n_s32(vsum, Dot::step(vdupq_n_s32(0), v0, vld1q_s8(q8)), scales[is++]);
                vsum = vmlaq_n_s32(vsum, Dot::step(vdupq_n_s32(0), v1, vld1q_s8(q8 + 16)), scales[is++]);
            }
        }
        sumf += (fp16_to_fp32(x[i].d) * y[i].d) * static_cast<float>(hsum_i32(vsum));
    }
    return sumf;
}

template <class Dot>
float dot_iq4_xs(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_iq4_xs *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    const int8x16_t values = vld1q_s8(k_iq4nl_values);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const uint8_t * qs = x[i].qs;
        const int8_t * q8 = y[i].qs;
        int32x4_t vsum = vdupq_n_s32(0);
        for (int ib = 0; ib < 8; ++ib, qs += 16, q8 += 32) {
            const uint8x16_t bits = vld1q_u8(qs);
            const int8x16_t v0 = vqtbl1q_s8(values, vandq_u8(bits, vdupq_n_u8(0x0F)));
            const int8x16_t v1 = vqtbl1q_s8(values, vshrq_n_u8(bits, 4));
            const int ls = ((x[i].scales_l[ib / 2] >> (4 * (ib % 2))) & 0x0F) | (((x[i].scales_h >> (2 * ib)) & 0x03) << 4);
            vsum = vmlaq_n_s32(vsum, dot32v<Dot>(v0, v1, q8), ls - 32);
        }
        sumf += (fp16_to_fp32(x[i].d) * y[i].d) * static_cast<float>(hsum_i32(vsum));
    }
    return sumf;
}

// --- plain float types: four 4-lane FMA accumulators, scalar tail --------------------------
struct f32_load {
    using elem = float;
    static float32x4_t load(const float * p) { return vld1q_f32(p); }
    static float one(float v) { return v; }
};
struct f16_load {
    using elem = uint16_t;
    static float32x4_t load(const uint16_t * p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
    static float one(uint16_t v) { return fp16_to_fp32(v); }
};
struct bf16_load {
    using elem = uint16_t;
    static float32x4_t load(const uint16_t * p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }
    static float one(uint16_t v) { return bf16_to_fp32(v); }
};

template <class L>
float dot_float(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const typename L::elem *>(w);
    const auto * y = static_cast<const typename L::elem *>(a);
    float32x4_t acc[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (int k = 0; k < 4; ++k) acc[k] = vfmaq_f32(acc[k], L::load(x + i + 4 * k), L::load(y + i + 4 * k));
    }
    for (; i + 4 <= n; i += 4) acc[0] = vfmaq_f32(acc[0], L::load(x + i), L::load(y + i));
    float sum = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
    for (; i < n; ++i) sum += L::one(x[i]) * L::one(y[i]);
    return sum;
}

// Row by row; tokens in groups of four. K<T>::run(n, row, a, a_stride, out, out_stride).
template <class B, template <int> class K>
void tiles(int64_t n, const void * w, size_t w_stride, int64_t n_rows, const void * a, size_t a_stride,
           int64_t n_tokens, float * out, int64_t out_stride) {
    const auto * ab = static_cast<const uint8_t *>(a);
    for (int64_t r = 0; r < n_rows; ++r) {
        const auto * x = reinterpret_cast<const B *>(static_cast<const uint8_t *>(w) + r * w_stride);
        int64_t t = 0;
        for (; t + 4 <= n_tokens; t += 4) K<4>::run(n, x, ab + t * a_stride, a_stride, out + t * out_stride + r, out_stride);
        switch (n_tokens - t) {
        case 3: K<3>::run(n, x, ab + t * a_stride, a_stride, out + t * out_stride + r, out_stride); break;
        case 2: K<2>::run(n, x, ab + t * a_stride, a_stride, out + t * out_stride + r, out_stride); break;
        case 1: K<1>::run(n, x, ab + t * a_stride, a_stride, out + t * out_stride + r, out_stride); break;
        default: break;
        }
    }
}

template <class Dot, class L>
struct q8_0_kernels {
    template <int T>
    struct k {
        static void run(int64_t n, const typename L::block * x, const uint8_t * a, size_t s, float * out, int64_t os) {
            tile_q8_0<Dot, L, T>(n, x, a, s, out, os);
        }
    };
    static void tile(int64_t n, const void * w, size_t ws, int64_t nr, const void * a, size_t as, int64_t nt, float * out, int64_t os) {
        tiles<typename L::block, k>(n, w, ws, nr, a, as, nt, out, os);
    }
};

template <class Dot>
struct k_kernels {
    template <int T>
    struct q4 {
        static void run(int64_t n, const block_q4_K * x, const uint8_t * a, size_t s, float * out, int64_t os) { tile_q4_K<Dot, T>(n, x, a, s, out, os); }
    };
    template <int T>
    struct q6 {
        static void run(int64_t n, const block_q6_K * x, const uint8_t * a, size_t s, float * out, int64_t os) { tile_q6_K<Dot, T>(n, x, a, s, out, os); }
    };
    static void tile_q4(int64_t n, const void * w, size_t ws, int64_t nr, const void * a, size_t as, int64_t nt, float * out, int64_t os) {
        tiles<block_q4_K, q4>(n, w, ws, nr, a, as, nt, out, os);
    }
    static void tile_q6(int64_t n, const void * w, size_t ws, int64_t nr, const void * a, size_t as, int64_t nt, float * out, int64_t os) {
        tiles<block_q6_K, q6>(n, w, ws, nr, a, as, nt, out, os);
    }
};

// Registers every NEON dot product of this translation unit's Dot step.
template <class Dot>
void add_dots(quant_kernels & table) {
    using tt = tensor_type;
    set_vec_dot<dot_q8_0<Dot, q4_0_load>, vec_dot_rows_by_row<dot_q8_0<Dot, q4_0_load>>, q8_0_kernels<Dot, q4_0_load>::tile>(table, tt::q4_0);
    set_vec_dot<dot_q8_0<Dot, q5_0_load>, vec_dot_rows_by_row<dot_q8_0<Dot, q5_0_load>>, q8_0_kernels<Dot, q5_0_load>::tile>(table, tt::q5_0);
    set_vec_dot<dot_q8_0<Dot, q8_0_load>, vec_dot_rows_by_row<dot_q8_0<Dot, q8_0_load>>, q8_0_kernels<Dot, q8_0_load>::tile>(table, tt::q8_0);
    set_vec_dot<dot_q8_0<Dot, iq4_nl_load>, vec_dot_rows_by_row<dot_q8_0<Dot, iq4_nl_load>>, q8_0_kernels<Dot, iq4_nl_load>::tile>(table, tt::iq4_nl);
    set_vec_dot<dot_q8_1<Dot, q4_1_load>>(table, tt::q4_1);
    set_vec_dot<dot_q8_1<Dot, q5_1_load>>(table, tt::q5_1);
    set_vec_dot<dot_q2_K<Dot>>(table, tt::q2_k);
    set_vec_dot<dot_q3_K<Dot>>(table, tt::q3_k);
    set_vec_dot<dot_q4_K<Dot>, vec_dot_rows_by_row<dot_q4_K<Dot>>, k_kernels<Dot>::tile_q4>(table, tt::q4_k);
    set_vec_dot<dot_q5_K<Dot>>(table, tt::q5_k);
    set_vec_dot<dot_q6_K<Dot>, vec_dot_rows_by_row<dot_q6_K<Dot>>, k_kernels<Dot>::tile_q6>(table, tt::q6_k);
    set_vec_dot<dot_iq4_xs<Dot>>(table, tt::iq4_xs);
}

}  // namespace
}  // namespace hearth::kernels::cpu::neon
