#include "kernels/ops.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <memory>

#include "kernels/fp16.h"
#include "kernels/ops_simd.h"

namespace hearth::kernels {
namespace {

// ggml's GELU formula; ggml evaluates it through an fp16 table (below), which this fills.
// 1 + (a x) x is one fma, as the compiler contracts it in ggml's build (C, -march=native): one
// table entry (x = -1.9990234375, a near-halfway case) rounds to the other fp16 value without it.
inline float gelu_tanh(float x) {
    constexpr float k_sqrt_2_over_pi = 0.79788456080286535587989211986876f;
    constexpr float k_coef_a = 0.044715f;
    return 0.5f * x * (1.0f + std::tanh(k_sqrt_2_over_pi * x * std::fma(k_coef_a * x, x, 1.0f)));
}

// gelu(h) for every fp16 bit pattern h, rounded to fp16: ggml's CPU GELU reads this table for
// |x| < 10, so matching llama.cpp's activations bit for bit needs the same rounding.
const uint16_t * gelu_table() {
    static const std::unique_ptr<uint16_t[]> table = [] {
        auto t = std::make_unique<uint16_t[]>(1u << 16);
        for (uint32_t i = 0; i < (1u << 16); ++i)
            t[i] = fp32_to_fp16(gelu_tanh(fp16_to_fp32(static_cast<uint16_t>(i))));
        return t;
    }();
    return table.get();
}

// Angles as ggml's rope cache builds them: theta starts at pos and is multiplied by theta_scale
// once per pair, in f32 (the rounding of that product chain is part of what llama.cpp computes).
void rope_cos_sin(int32_t pos, const rope_params & p, float * cos_out, float * sin_out) {
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    float theta = static_cast<float>(pos);
    for (int32_t i = 0; i < p.n_rot / 2; ++i) {
        const float t = p.freq_factors ? p.freq_scale * (theta / p.freq_factors[i]) : p.freq_scale * theta;
        cos_out[i] = std::cos(t) * p.attn_factor;
        sin_out[i] = std::sin(t) * p.attn_factor;
        theta *= theta_scale;
    }
}

}  // namespace

void rms_norm(const float * x, const float * w, float * y, int64_t n_tokens, int64_t n, float eps) {
    // Each row's sum of squares in double and in order (ggml's), four rows side by side: one
    // row's sum is a chain of dependent adds, four independent chains overlap. A group's sums
    // are all taken before any of its rows is written (x may be y).
    constexpr int64_t k_rows = 4;
    for (int64_t t0 = 0; t0 < n_tokens; t0 += k_rows) {
        const float * xg = x + t0 * n;
        const int64_t rows = std::min(k_rows, n_tokens - t0);
        double sums[k_rows] = {};
        if (rows == k_rows) {   // a constant count, so the four chains interleave
            for (int64_t i = 0; i < n; ++i)
                for (int64_t k = 0; k < k_rows; ++k) sums[k] += static_cast<double>(xg[k * n + i] * xg[k * n + i]);
        } else {
            for (int64_t k = 0; k < rows; ++k)
                for (int64_t i = 0; i < n; ++i) sums[k] += static_cast<double>(xg[k * n + i] * xg[k * n + i]);
        }
        for (int64_t k = 0; k < rows; ++k) {
            const float * xr = xg + k * n;
            float * yr = y + (t0 + k) * n;
            const float mean = static_cast<float>(sums[k] / static_cast<double>(n));
            const float scale = 1.0f / std::sqrt(mean + eps);
            if (w) {
                for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] * scale) * w[i];
            } else {
                for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] * scale;
            }
        }
    }
}

void layer_norm(const float * x, const float * w, const float * b, float * y, int64_t n_tokens, int64_t n,
                float eps) {
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float * xr = x + t * n;
        float * yr = y + t * n;
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(xr[i]);
        const float mean = static_cast<float>(sum / static_cast<double>(n));
        double sum2 = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            const float v = xr[i] - mean;
            yr[i] = v;
            sum2 += static_cast<double>(v * v);
        }
        const float variance = static_cast<float>(sum2 / static_cast<double>(n));
        const float scale = 1.0f / std::sqrt(variance + eps);
        for (int64_t i = 0; i < n; ++i) yr[i] *= scale;
        if (w)
            for (int64_t i = 0; i < n; ++i) yr[i] *= w[i];
        if (b)
            for (int64_t i = 0; i < n; ++i) yr[i] += b[i];
    }
}

void rope(float * x, int64_t n_tokens, int64_t n_head, int64_t head_dim, const int32_t * pos, const rope_params & p) {
    assert(p.n_rot > 0 && p.n_rot % 2 == 0 && p.n_rot <= head_dim);
    constexpr int k_max_pairs = 512;
    assert(p.n_rot / 2 <= k_max_pairs);
    std::array<float, k_max_pairs> cos_t, sin_t;
    const int64_t n_pairs = p.n_rot / 2;
    const auto rotate = simd::active_f32_kernels().rotate_pairs;
    for (int64_t t = 0; t < n_tokens; ++t) {
        rope_cos_sin(pos[t], p, cos_t.data(), sin_t.data());
        for (int64_t h = 0; h < n_head; ++h) {
            float * v = x + (t * n_head + h) * head_dim;
            if (p.mode == rope_mode::neox) {   // pair i is (i, i + n_rot/2): two contiguous halves, vectors
                rotate(v, v + n_pairs, cos_t.data(), sin_t.data(), n_pairs);
            } else {   // pair i is (2i, 2i + 1)
                for (int64_t i = 0; i < n_pairs; ++i) simd::rotate_pair(v[2 * i], v[2 * i + 1], cos_t[i], sin_t[i]);
            }
        }
    }
}

void softmax(const float * x, float * y, int64_t n_rows, int64_t n, float scale) {
    for (int64_t r = 0; r < n_rows; ++r) {
        const float * xr = x + r * n;
        float * yr = y + r * n;
        float max = -INFINITY;
        for (int64_t i = 0; i < n; ++i) {
            yr[i] = xr[i] * scale;
            max = std::fmax(max, yr[i]);
        }
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            yr[i] = std::exp(yr[i] - max);
            sum += static_cast<double>(yr[i]);
        }
        const auto inv = static_cast<float>(1.0 / sum);
        for (int64_t i = 0; i < n; ++i) yr[i] *= inv;
    }
}

void silu(const float * x, float * y, size_t n) {
    simd::active_f32_kernels().silu(x, y, static_cast<int64_t>(n));
}

void gelu(const float * x, float * y, size_t n) {
    const uint16_t * table = gelu_table();
    for (size_t i = 0; i < n; ++i) {
        const float v = x[i];
        if (v <= -10.0f) y[i] = 0.0f;
        else if (v >= 10.0f) y[i] = v;
        else y[i] = fp16_to_fp32(table[fp32_to_fp16(v)]);
    }
}

void swiglu(const float * gate, const float * up, float * y, size_t n) {
    simd::active_f32_kernels().swiglu(gate, up, y, static_cast<int64_t>(n));
}

void add(const float * a, const float * b, float * y, size_t n) {
    for (size_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void mul(const float * a, const float * b, float * y, size_t n) {
    for (size_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

void add_row(float * x, const float * b, int64_t n_tokens, int64_t n) {
    for (int64_t t = 0; t < n_tokens; ++t) add(x + t * n, b, x + t * n, static_cast<size_t>(n));
}

}  // namespace hearth::kernels
