#include "kernels/ops_simd.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/fp16.h"

namespace hearth::kernels::simd {

#if defined(__x86_64__) || defined(_M_X64)
const f32_kernels & f32_kernels_avx2();   // kernels/cpu/x86/ops_avx2.cpp
#endif
#if defined(__aarch64__)
const f32_kernels & f32_kernels_neon();   // kernels/cpu/arm/ops_neon.cpp
#endif

namespace {

// 2^k for k in [-126, 127].
inline float pow2i(int32_t k) {
    const auto bits = static_cast<uint32_t>(k + 127) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

}  // namespace

// Each step is one IEEE operation (std::fma rounds once), so the AVX2 version, built from the
// same operations, gives the same bits.
float exp_ggml(float x) {
    const float r = 0x1.8p23f;   // adding it rounds to an integer (the low mantissa bits)
    const float z = std::fma(x, 0x1.715476p+0f, r);
    const float n = z - r;
    const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
    const float u = b * b;
    const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
                                      std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                             u, std::fma(0x1.ffffecp-1f, b, 1.0f));
    if (!(std::fabs(n) <= 192.0f)) {
        if (std::fabs(n) > 192.0f) return n <= 0.0f ? 0.0f : INFINITY;
        return j * n;   // NaN in, NaN out
    }
    // j * 2^n rounded once (as scalef): split 2^n so the first product is exact.
    const auto ni = static_cast<int32_t>(n);
    const int32_t k2 = ni > 127 ? ni - 127 : (ni < -126 ? -100 : 0);
    return (j * pow2i(ni - k2)) * pow2i(k2);
}

float fold16(const float * x) {
    float a[8], b[4];
    for (int i = 0; i < 8; ++i) a[i] = x[i] + x[i + 8];
    for (int i = 0; i < 4; ++i) b[i] = a[i] + a[i + 4];
    return (b[0] + b[2]) + (b[1] + b[3]);
}

double exp_sum16_portable(const float * x, float shift, float * y, int64_t n) {
    double sum = 0.0;
    for (int64_t i0 = 0; i0 < n; i0 += 16) {
        float block[16] = {};
        const int64_t m = std::min<int64_t>(16, n - i0);
        for (int64_t i = 0; i < m; ++i) block[i] = y[i0 + i] = exp_ggml(x[i0 + i] - shift);
        sum += static_cast<double>(fold16(block));
    }
    return sum;
}

float fold_lanes(const float * x, int n_lanes, int64_t stride) {
    float v[16];
    for (int l = 0; l < 16; ++l) {
        v[l] = x[l * stride];
        if (n_lanes == 64) {
            v[l] = (v[l] + x[(l + 32) * stride]) + (x[(l + 16) * stride] + x[(l + 48) * stride]);
        }
    }
    return fold16(v);
}

void fold_lane_rows(float * lanes, int n_lanes, int64_t d, float * out) {
    const auto row = [&](int l) { return lanes + l * d; };
    if (n_lanes == 64)
        for (int l = 0; l < 16; ++l)
            for (int64_t j = 0; j < d; ++j)
                row(l)[j] = (row(l)[j] + row(l + 32)[j]) + (row(l + 16)[j] + row(l + 48)[j]);
    for (int half = 8; half >= 2; half /= 2)
        for (int l = 0; l < half; ++l)
            for (int64_t j = 0; j < d; ++j) row(l)[j] += row(l + half)[j];
    for (int64_t j = 0; j < d; ++j) out[j] = row(0)[j] + row(1)[j];
}

void dot_lanes_rows_portable(const float * q, const float * k, int64_t k_stride, int64_t n_rows, int64_t d,
                             int n_lanes, float * out) {
    for (int64_t i = 0; i < n_rows; ++i) {
        const float * ki = k + i * k_stride;
        float lanes[64] = {};
        for (int64_t j = 0; j < d; j += n_lanes)
            for (int l = 0; l < n_lanes; ++l) lanes[l] = std::fma(q[j + l], ki[j + l], lanes[l]);
        out[i] = fold_lanes(lanes, n_lanes, 1);
    }
}

void lane_axpy_portable(const float * p, int64_t p_stride, const float * v, int64_t v_stride, int64_t n_rows,
                        int64_t d, int n_lanes, float * lanes, int64_t lanes_stride, int64_t n_sets) {
    for (int64_t s = 0; s < n_sets; ++s)
        for (int64_t i = 0; i < n_rows; ++i) {
            float * lane = lanes + s * lanes_stride + (i % n_lanes) * d;
            const float * vi = v + i * v_stride;
            const float w = p[s * p_stride + i];
            for (int64_t j = 0; j < d; ++j) lane[j] = std::fma(w, vi[j], lane[j]);
        }
}

namespace {

float dot_portable(const float * a, const float * b, int64_t n) {
    // Eight partial sums: the compiler turns them into vector lanes without reassociating.
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) acc[l] += a[i + l] * b[i + l];
    float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

void axpy_portable(float a, const float * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

void scale_portable(float * y, float s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

float exp_shifted_portable(const float * x, float shift, float * y, int64_t n) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        const float d = x[i] - shift;
        y[i] = d < -87.33654f ? 0.0f : std::exp(d);
        sum += y[i];
    }
    return sum;
}

// ggml's x / (1 + exp(0 - x)), with its exp.
void silu_portable(const float * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + exp_ggml(0.0f - x[i]));
}

void swiglu_portable(const float * gate, const float * up, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = gate[i] / (1.0f + exp_ggml(0.0f - gate[i])) * up[i];
}

void dot_rows_portable(const float * q, const float * k, int64_t k_stride, int64_t n_rows, int64_t d, float scale,
                       float * out) {
    for (int64_t i = 0; i < n_rows; ++i) out[i] = dot_portable(q, k + i * k_stride, d) * scale;
}

void weighted_sum_portable(const float * p, const float * v, int64_t v_stride, int64_t n_rows, int64_t d,
                           float * acc) {
    for (int64_t i = 0; i < n_rows; ++i) axpy_portable(p[i], v + i * v_stride, acc, d);
}

}  // namespace

void rotate_pairs_portable(float * a, float * b, const float * c, const float * s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) rotate_pair(a[i], b[i], c[i], s[i]);
}

void f16_rows_to_f32_portable(const void * src, size_t src_stride, int64_t n_rows, int64_t d, float * dst) {
    for (int64_t i = 0; i < n_rows; ++i) {
        const auto * row = reinterpret_cast<const uint16_t *>(static_cast<const std::byte *>(src) + i * src_stride);
        for (int64_t j = 0; j < d; ++j) {
            const float x = fp16_to_fp32(row[j]);
            // A NaN comes out quiet, as F16C's conversion makes it.
            dst[i * d + j] = std::isnan(x) ? f32_from_bits(f32_bits(x) | 0x00400000u) : x;
        }
    }
}

namespace {

constexpr f32_kernels k_portable{cpu::isa::scalar,     dot_portable,         axpy_portable,
                                 scale_portable,       exp_shifted_portable, silu_portable,
                                 swiglu_portable,      dot_rows_portable,    weighted_sum_portable,
                                 exp_sum16_portable,   dot_lanes_rows_portable, lane_axpy_portable,
                                 rotate_pairs_portable, f16_rows_to_f32_portable};

}  // namespace

const f32_kernels & f32_kernels_for(cpu::isa i) {
#if defined(__x86_64__) || defined(_M_X64)
    if (i == cpu::isa::avx2 || i == cpu::isa::avx512_vnni) return f32_kernels_avx2();
#endif
#if defined(__aarch64__)
    if (i == cpu::isa::neon || i == cpu::isa::neon_dotprod) return f32_kernels_neon();
#endif
    (void)i;
    return k_portable;
}

const f32_kernels & active_f32_kernels() {
    static const f32_kernels & active = f32_kernels_for(cpu::active_isa());
    return active;
}

}  // namespace hearth::kernels::simd
