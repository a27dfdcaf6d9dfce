// NEON row conversions (quantize_row / dequantize_row) for the activation and KV-cache types,
// bit-identical to the scalar reference (the tests check it under qemu): vrndaq is exactly
// roundf, vrndnq exactly the reference's round-half-even, and f16 lanes holding NaN or Inf
// take the scalar path so NaN payloads follow the reference's rules, not the FPU's quieting.
#pragma GCC optimize("fp-contract=off")

#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/cpu/quant_variants.h"
#include "kernels/fp16.h"

namespace hearth::kernels::cpu {
namespace {

// max |x| over `count` floats (a multiple of 4), ignoring NaNs like std::max(amax, fabs(x)).
float abs_max(const float * x, int count) {
    float32x4_t m = vdupq_n_f32(0.0f);
    for (int j = 0; j < count; j += 4) m = vmaxnmq_f32(m, vabsq_f32(vld1q_f32(x + j)));
    return vmaxnmvq_f32(m);
}

// 32 int32 -> 32 int8 (values already within int8).
void store_i8x32(int8_t * dst, const int32x4_t (&q)[8]) {
    for (int k = 0; k < 2; ++k) {
        const int16x8_t a = vcombine_s16(vmovn_s32(q[4 * k + 0]), vmovn_s32(q[4 * k + 1]));
        const int16x8_t b = vcombine_s16(vmovn_s32(q[4 * k + 2]), vmovn_s32(q[4 * k + 3]));
        vst1q_s8(dst + 16 * k, vcombine_s8(vmovn_s16(a), vmovn_s16(b)));
    }
}

void quantize_row_q8_0(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<block_q8_0 *>(dst);
    for (int64_t i = 0; i < n / k_qk8_0; ++i, src += k_qk8_0) {
        const float d = abs_max(src, 32) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16(d);
        int32x4_t q[8];
        for (int k = 0; k < 8; ++k) q[k] = vcvtq_s32_f32(vrndaq_f32(vmulq_n_f32(vld1q_f32(src + 4 * k), id)));
        store_i8x32(y[i].qs, q);
    }
}

void quantize_row_q8_1(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<block_q8_1 *>(dst);
    for (int64_t i = 0; i < n / k_qk8_1; ++i, src += k_qk8_1) {
        const float d = abs_max(src, 32) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int32x4_t q[8];
        int32x4_t sum = vdupq_n_s32(0);
        for (int k = 0; k < 8; ++k) {
            q[k] = vcvtq_s32_f32(vrndaq_f32(vmulq_n_f32(vld1q_f32(src + 4 * k), id)));
            sum = vaddq_s32(sum, q[k]);
        }
        store_i8x32(y[i].qs, q);
        y[i].d = fp32_to_fp16(d);
        y[i].s = fp32_to_fp16(static_cast<float>(vaddvq_s32(sum)) * d);
    }
}

void quantize_row_q8_K(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<block_q8_K *>(dst);
    for (int64_t i = 0; i < n / k_qk_k; ++i, src += k_qk_k) {
        const float amax = abs_max(src, k_qk_k);
        if (!(amax > 0.0f)) {
            std::memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        int first = 0;   // the first element of largest magnitude gives the scale its sign
        while (std::fabs(src[first]) != amax) ++first;
        const float iscale = -127.0f / src[first];
        for (int j = 0; j < k_qk_k; j += 32) {
            int32x4_t q[8];
            for (int k = 0; k < 8; ++k) {
                const float32x4_t v = vrndnq_f32(vmulq_n_f32(vld1q_f32(src + j + 4 * k), iscale));
                q[k] = vminq_s32(vcvtq_s32_f32(v), vdupq_n_s32(127));
            }
            store_i8x32(y[i].qs + j, q);
            y[i].bsums[j / 16] = static_cast<int16_t>(vaddvq_s32(vaddq_s32(vaddq_s32(q[0], q[1]), vaddq_s32(q[2], q[3]))));
            y[i].bsums[j / 16 + 1] = static_cast<int16_t>(vaddvq_s32(vaddq_s32(vaddq_s32(q[4], q[5]), vaddq_s32(q[6], q[7]))));
        }
        y[i].d = 1.0f / iscale;
    }
}

void quantize_row_f16(const float * src, void * dst, int64_t n) {
    auto * y = static_cast<uint16_t *>(dst);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(src + i);
        if (vminvq_u32(vceqq_f32(v, v)) == 0) {   // a NaN lane: the reference's payload rules
            for (int k = 0; k < 4; ++k) y[i + k] = fp32_to_fp16(src[i + k]);
            continue;
        }
        vst1_u16(y + i, vreinterpret_u16_f16(vcvt_f16_f32(v)));
    }
    for (; i < n; ++i) y[i] = fp32_to_fp16(src[i]);
}

void dequantize_row_f16(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const uint16_t *>(src);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const uint16x4_t h = vld1_u16(x + i);
        if (vmaxv_u16(vceq_u16(vand_u16(h, vdup_n_u16(0x7C00)), vdup_n_u16(0x7C00))) != 0) {
            for (int k = 0; k < 4; ++k) dst[i + k] = fp16_to_fp32(x[i + k]);   // Inf/NaN lanes
            continue;
        }
        vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(h)));
    }
    for (; i < n; ++i) dst[i] = fp16_to_fp32(x[i]);
}

void store_scaled(float * dst, int8x16_t q, float d) {
    const int16x8_t lo = vmovl_s8(vget_low_s8(q));
    const int16x8_t hi = vmovl_s8(vget_high_s8(q));
    vst1q_f32(dst + 0, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), d));
    vst1q_f32(dst + 4, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_high_s16(lo))), d));
    vst1q_f32(dst + 8, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), d));
    vst1q_f32(dst + 12, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_high_s16(hi))), d));
}

void dequantize_row_q8_0(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q8_0 *>(src);
    for (int64_t i = 0; i < n / k_qk8_0; ++i, dst += k_qk8_0) {
        const float d = fp16_to_fp32(x[i].d);
        store_scaled(dst, vld1q_s8(x[i].qs), d);
        store_scaled(dst + 16, vld1q_s8(x[i].qs + 16), d);
    }
}

void dequantize_row_q4_0(const void * src, float * dst, int64_t n) {
    const auto * x = static_cast<const block_q4_0 *>(src);
    for (int64_t i = 0; i < n / k_qk4_0; ++i, dst += k_qk4_0) {
        const float d = fp16_to_fp32(x[i].d);
        const uint8x16_t bits = vld1q_u8(x[i].qs);
        store_scaled(dst, vsubq_s8(vreinterpretq_s8_u8(vandq_u8(bits, vdupq_n_u8(0x0F))), vdupq_n_s8(8)), d);
        store_scaled(dst + 16, vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(bits, 4)), vdupq_n_s8(8)), d);
    }
}

}  // namespace

void add_quant_conversions_neon(quant_kernels & table) {
    using tt = tensor_type;
    table[tt::q8_0].quantize_row = quantize_row_q8_0;
    table[tt::q8_1].quantize_row = quantize_row_q8_1;
    table[tt::q8_k].quantize_row = quantize_row_q8_K;
    table[tt::f16].quantize_row = quantize_row_f16;
    table[tt::f16].dequantize_row = dequantize_row_f16;
    table[tt::q8_0].dequantize_row = dequantize_row_q8_0;
    table[tt::q4_0].dequantize_row = dequantize_row_q4_0;
}

}  // namespace hearth::kernels::cpu
