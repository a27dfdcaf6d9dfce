// Scalar reference for the 256-element super-block types: q2_K, q3_K, q4_K, q5_K, q6_K, q8_K and
// iq4_xs. Dot products take q8_K activations, sum integers over the whole super-block (at most
// 256 * 63 * 31 * 127 in magnitude, far inside int32) and scale once per block in f32.
#pragma GCC optimize("fp-contract=off")

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/cpu/generic/quant_scalar.h"
#include "kernels/fp16.h"

namespace hearth::kernels::cpu::scalar {
namespace {

// The 16 signed 6-bit scales of a q3_K block (each still offset by 32).
void q3_K_scales(const uint8_t * packed, int8_t * scales) {
    for (int i = 0; i < 16; ++i) {
        const int low = (i < 8 ? packed[i] : packed[i - 8] >> 4) & 0x0F;
        const int high = (packed[8 + (i % 4)] >> (2 * (i / 4))) & 0x03;
        scales[i] = static_cast<int8_t>(low | (high << 4));
    }
}

// The 6-bit scale of sub-block ib (0..7) of an iq4_xs block (offset by 32).
int iq4_xs_scale(const block_iq4_xs & b, int ib) {
    const int low = (b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0x0F;
    const int high = (b.scales_h >> (2 * ib)) & 0x03;
    return low | (high << 4);
}

// ggml's nearest_int: round half to even through the f32 mantissa (|v| < 2^22).
int nearest_int(float v) {
    const float shifted = v + 12582912.0f;
    int32_t i;
    std::memcpy(&i, &shifted, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}

}  // namespace

void dequantize_row_q2_K(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q2_K *>(src);
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        const float dmin = fp16_to_fp32(x[i].dmin);
        const uint8_t * q = x[i].qs;
        int is = 0;
        for (int half = 0; half < 2; ++half, q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; ++part) {
                    const uint8_t sc = x[i].scales[is++];
                    const float dl = d * static_cast<float>(sc & 0x0F);
                    const float ml = dmin * static_cast<float>(sc >> 4);
                    for (int l = 0; l < 16; ++l) *dst++ = dl * static_cast<float>((q[l + 16 * part] >> shift) & 3) - ml;
                }
            }
        }
    }
}

void dequantize_row_q3_K(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q3_K *>(src);
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        int8_t scales[16];
        q3_K_scales(x[i].scales, scales);
        const uint8_t * q = x[i].qs;
        const uint8_t * hm = x[i].hmask;
        int is = 0;
        uint8_t m = 1;
        for (int half = 0; half < 2; ++half, q += 32) {
            for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
                for (int part = 0; part < 2; ++part) {
                    const float dl = d * static_cast<float>(scales[is++] - 32);
                    for (int l = 16 * part; l < 16 * part + 16; ++l) {
                        const int v = ((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4);
                        *dst++ = dl * static_cast<float>(v);
                    }
                }
            }
        }
    }
}

void dequantize_row_q4_K(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q4_K *>(src);
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        const float dmin = fp16_to_fp32(x[i].dmin);
        const uint8_t * q = x[i].qs;
        for (int j = 0; j < 8; j += 2, q += 32) {
            uint8_t sc, m;
            k_scale_min(j, x[i].scales, sc, m);
            const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
            k_scale_min(j + 1, x[i].scales, sc, m);
            const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
            for (int l = 0; l < 32; ++l) *dst++ = d1 * static_cast<float>(q[l] & 0x0F) - m1;
            for (int l = 0; l < 32; ++l) *dst++ = d2 * static_cast<float>(q[l] >> 4) - m2;
        }
    }
}

void dequantize_row_q5_K(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q5_K *>(src);
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        const float dmin = fp16_to_fp32(x[i].dmin);
        const uint8_t * ql = x[i].qs;
        const uint8_t * qh = x[i].qh;
        uint8_t u1 = 1, u2 = 2;
        for (int j = 0; j < 8; j += 2, ql += 32) {
            uint8_t sc, m;
            k_scale_min(j, x[i].scales, sc, m);
            const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
            k_scale_min(j + 1, x[i].scales, sc, m);
            const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
            for (int l = 0; l < 32; ++l) *dst++ = d1 * static_cast<float>((ql[l] & 0x0F) + (qh[l] & u1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l) *dst++ = d2 * static_cast<float>((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
            u1 = static_cast<uint8_t>(u1 << 2);
            u2 = static_cast<uint8_t>(u2 << 2);
        }
    }
}

void dequantize_row_q6_K(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q6_K *>(src);
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        const uint8_t * ql = x[i].ql;
        const uint8_t * qh = x[i].qh;
        const int8_t * sc = x[i].scales;
        for (int half = 0; half < 2; ++half, dst += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                dst[l] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
                dst[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
                dst[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
                dst[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
            }
        }
    }
}

void dequantize_row_q8_K(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q8_K *>(src);
    for (int64_t i = 0; i < n / k_qk_k; ++i, dst += k_qk_k) {
        for (int j = 0; j < k_qk_k; ++j) dst[j] = x[i].d * static_cast<float>(x[i].qs[j]);
    }
}

void dequantize_row_iq4_xs(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_iq4_xs *>(src);
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        const uint8_t * qs = x[i].qs;
        for (int ib = 0; ib < k_qk_k / 32; ++ib, qs += 16, dst += 32) {
            const float dl = d * static_cast<float>(iq4_xs_scale(x[i], ib) - 32);
            for (int j = 0; j < 16; ++j) {
                dst[j] = dl * static_cast<float>(k_iq4nl_values[qs[j] & 0x0F]);
                dst[j + 16] = dl * static_cast<float>(k_iq4nl_values[qs[j] >> 4]);
            }
        }
    }
}

void quantize_row_q8_K(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<block_q8_K *>(dst);
    for (int64_t i = 0; i < n / k_qk_k; ++i, src += k_qk_k) {
        float amax = 0.0f;   // largest magnitude; `max` keeps its sign (first one on ties)
        float max = 0.0f;
        for (int j = 0; j < k_qk_k; ++j) {
            const float ax = std::fabs(src[j]);
            if (ax > amax) {
                amax = ax;
                max = src[j];
            }
        }
        if (amax == 0.0f) {
            std::memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        // The largest element maps to -127 (ggml's convention; -128 is never produced).
        const float iscale = -127.0f / max;
        for (int j = 0; j < k_qk_k; ++j) y[i].qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * src[j])));
        for (int g = 0; g < k_qk_k / 16; ++g) {
            int sum = 0;
            for (int l = 0; l < 16; ++l) sum += y[i].qs[16 * g + l];
            y[i].bsums[g] = static_cast<int16_t>(sum);
        }
        y[i].d = 1.0f / iscale;
    }
}

float vec_dot_q2_K(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q2_K *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        int summs = 0;   // sum over sub-blocks of min * sum(q8)
        for (int j = 0; j < 16; ++j) summs += y[i].bsums[j] * (x[i].scales[j] >> 4);
        const uint8_t * q2 = x[i].qs;
        const int8_t * q8 = y[i].qs;
        int sumi = 0;
        int is = 0;
        for (int half = 0; half < 2; ++half, q2 += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; ++part, q8 += 16) {
                    int s = 0;
                    for (int l = 0; l < 16; ++l) s += q8[l] * ((q2[l + 16 * part] >> shift) & 3);
                    sumi += (x[i].scales[is++] & 0x0F) * s;
                }
            }
        }
        const float dall = y[i].d * fp16_to_fp32(x[i].d);
        const float dmin = y[i].d * fp16_to_fp32(x[i].dmin);
        sumf += dall * static_cast<float>(sumi) - dmin * static_cast<float>(summs);
    }
    return sumf;
}

float vec_dot_q3_K(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q3_K *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        int8_t scales[16];
        q3_K_scales(x[i].scales, scales);
        const uint8_t * q3 = x[i].qs;
        const uint8_t * hm = x[i].hmask;
        const int8_t * q8 = y[i].qs;
        int sumi = 0;
        int is = 0;
        uint8_t m = 1;
        for (int half = 0; half < 2; ++half, q3 += 32) {
            for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
                for (int part = 0; part < 2; ++part, q8 += 16) {
                    int s = 0;
                    for (int l = 16 * part; l < 16 * part + 16; ++l) {
                        const int v = ((q3[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4);
                        s += v * q8[l - 16 * part];
                    }
                    sumi += (scales[is++] - 32) * s;
                }
            }
        }
        sumf += (fp16_to_fp32(x[i].d) * y[i].d) * static_cast<float>(sumi);
    }
    return sumf;
}

float vec_dot_q4_K(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q4_K *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const uint8_t * q4 = x[i].qs;
        const int8_t * q8 = y[i].qs;
        int sumi = 0;
        int summs = 0;
        for (int j = 0; j < 8; j += 2, q4 += 32, q8 += 64) {
            uint8_t sc1, m1, sc2, m2;
            k_scale_min(j, x[i].scales, sc1, m1);
            k_scale_min(j + 1, x[i].scales, sc2, m2);
            int s1 = 0, s2 = 0;
            for (int l = 0; l < 32; ++l) {
                s1 += (q4[l] & 0x0F) * q8[l];
                s2 += (q4[l] >> 4) * q8[l + 32];
            }
            sumi += sc1 * s1 + sc2 * s2;
            summs += m1 * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]) + m2 * (y[i].bsums[2 * j + 2] + y[i].bsums[2 * j + 3]);
        }
        const float d = fp16_to_fp32(x[i].d) * y[i].d;
        const float dmin = fp16_to_fp32(x[i].dmin) * y[i].d;
        sumf += d * static_cast<float>(sumi) - dmin * static_cast<float>(summs);
    }
    return sumf;
}

float vec_dot_q5_K(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q5_K *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const uint8_t * ql = x[i].qs;
        const uint8_t * qh = x[i].qh;
        const int8_t * q8 = y[i].qs;
        int sumi = 0;
        int summs = 0;
        uint8_t u1 = 1, u2 = 2;
        for (int j = 0; j < 8; j += 2, ql += 32, q8 += 64) {
            uint8_t sc1, m1, sc2, m2;
            k_scale_min(j, x[i].scales, sc1, m1);
            k_scale_min(j + 1, x[i].scales, sc2, m2);
            int s1 = 0, s2 = 0;
            for (int l = 0; l < 32; ++l) {
                s1 += ((ql[l] & 0x0F) + (qh[l] & u1 ? 16 : 0)) * q8[l];
                s2 += ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) * q8[l + 32];
            }
            sumi += sc1 * s1 + sc2 * s2;
            summs += m1 * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]) + m2 * (y[i].bsums[2 * j + 2] + y[i].bsums[2 * j + 3]);
            u1 = static_cast<uint8_t>(u1 << 2);
            u2 = static_cast<uint8_t>(u2 << 2);
        }
        const float d = fp16_to_fp32(x[i].d) * y[i].d;
        const float dmin = fp16_to_fp32(x[i].dmin) * y[i].d;
        sumf += d * static_cast<float>(sumi) - dmin * static_cast<float>(summs);
    }
    return sumf;
}

float vec_dot_q6_K(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_q6_K *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const uint8_t * ql = x[i].ql;
        const uint8_t * qh = x[i].qh;
        const int8_t * sc = x[i].scales;
        const int8_t * q8 = y[i].qs;
        int sumi = 0;
        for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, q8 += 128) {
            int s[8] = {};
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                s[is + 0] += q1 * q8[l];
                s[is + 2] += q2 * q8[l + 32];
                s[is + 4] += q3 * q8[l + 64];
                s[is + 6] += q4 * q8[l + 96];
            }
            for (int k = 0; k < 8; ++k) sumi += sc[k] * s[k];
        }
        sumf += (fp16_to_fp32(x[i].d) * y[i].d) * static_cast<float>(sumi);
    }
    return sumf;
}

float vec_dot_iq4_xs(int64_t n, const void * w, const void * a) {
    const auto * x = static_cast<const block_iq4_xs *>(w);
    const auto * y = static_cast<const block_q8_K *>(a);
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / k_qk_k; ++i) {
        const uint8_t * qs = x[i].qs;
        const int8_t * q8 = y[i].qs;
        int sumi = 0;
        for (int ib = 0; ib < k_qk_k / 32; ++ib, qs += 16, q8 += 32) {
            int s = 0;
            for (int j = 0; j < 16; ++j) {
                s += k_iq4nl_values[qs[j] & 0x0F] * q8[j];
                s += k_iq4nl_values[qs[j] >> 4] * q8[j + 16];
            }
            sumi += (iq4_xs_scale(x[i], ib) - 32) * s;
        }
        sumf += (fp16_to_fp32(x[i].d) * y[i].d) * static_cast<float>(sumi);
    }
    return sumf;
}

}  // namespace hearth::kernels::cpu::scalar
