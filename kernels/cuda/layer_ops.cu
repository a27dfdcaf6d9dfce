// The element-wise and row-wise operations: RMS norm, LayerNorm, RoPE, SwiGLU, SiLU, GELU, add, mul,
// scale (as the Vulkan shaders and the CPU kernels of kernels/ops.cpp).
#include <cassert>
#include <cmath>
#include <cuda_fp16.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/reduce.cuh"

namespace hearth::kernels::cuda {
namespace {

unsigned groups(int64_t n) { return static_cast<unsigned>((n + k_block - 1) / k_block); }

// One block per row; the f32 squares summed in double as the CPU sums them.
__global__ void rms_norm_kernel(const float * x, const float * w, float * y, int64_t n, float eps) {
    const float * xr = x + static_cast<int64_t>(blockIdx.x) * n;
    float * yr = y + static_cast<int64_t>(blockIdx.x) * n;
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += k_block) s += static_cast<double>(xr[i] * xr[i]);
    const float mean = static_cast<float>(block_sum(s) / static_cast<double>(n));
    const float scale = 1.0f / sqrtf(mean + eps);
    for (int64_t i = threadIdx.x; i < n; i += k_block) {
        float v = xr[i] * scale;
        if (w) v = v * w[i];
        yr[i] = v;
    }
}

// One block per row, as the CPU: the mean of the f32 values and the mean of the f32 squares of
// the deviations, each summed in double; then ((v * scale) * w) + b in that order. Each thread
// reads and writes only its own elements, so y may be x.
__global__ void layer_norm_kernel(const float * x, const float * w, const float * b, float * y, int64_t n, float eps) {
    const float * xr = x + static_cast<int64_t>(blockIdx.x) * n;
    float * yr = y + static_cast<int64_t>(blockIdx.x) * n;
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += k_block) s += static_cast<double>(xr[i]);
    const float mean = static_cast<float>(block_sum(s) / static_cast<double>(n));
    double s2 = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += k_block) {
        const float v = xr[i] - mean;
        s2 += static_cast<double>(v * v);
    }
    const float variance = static_cast<float>(block_sum(s2) / static_cast<double>(n));
    const float scale = 1.0f / sqrtf(variance + eps);
    for (int64_t i = threadIdx.x; i < n; i += k_block) {
        float v = (xr[i] - mean) * scale;
        if (w) v = v * w[i];
        if (b) v = v + b[i];
        yr[i] = v;
    }
}

// One thread per (pair, head, token); the angle by i repeated f32 multiplications, as the CPU,
// divided by the pair's frequency factor before the scaling (ggml's order), cos and sin times
// attn_factor.
__global__ void rope_kernel(float * x, const int32_t * pos, const float * freq_factors, int64_t n_head,
                            int64_t head_dim, int64_t n_rot, float theta_scale, float freq_scale, float attn_factor,
                            bool neox) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t h = blockIdx.y, t = blockIdx.z;
    if (i >= n_rot / 2) return;
    float theta = static_cast<float>(pos[t]);
    for (int64_t k = 0; k < i; ++k) theta = theta * theta_scale;
    const float angle = freq_factors ? freq_scale * (theta / freq_factors[i]) : freq_scale * theta;
    const float c = cosf(angle) * attn_factor, s = sinf(angle) * attn_factor;
    const int64_t base = (t * n_head + h) * head_dim;
    const int64_t ia = neox ? base + i : base + 2 * i;
    const int64_t ib = neox ? base + i + n_rot / 2 : base + 2 * i + 1;
    const float x0 = x[ia], x1 = x[ib];
    x[ia] = fmaf(x0, c, -(x1 * s));
    x[ib] = fmaf(x0, s, x1 * c);
}

__global__ void swiglu_kernel(const float * g, const float * u, float * y, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

__global__ void silu_kernel(const float * x, float * y, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] / (1.0f + expf(-x[i]));
}

// ggml's GELU as kernels::gelu takes it from its fp16 table: the input rounded to f16, the tanh
// formula with (a x) x + 1 as one fma (the table's), the result rounded to f16; the table is not
// read below -10 (0) or from 10 (x itself). tanhf is within 2 ulp of the CPU's, so a result
// within that of an f16 rounding boundary can land one f16 step away.
__device__ float gelu_f16(float x) {
    constexpr float k_sqrt_2_over_pi = 0.79788456080286535587989211986876f;
    constexpr float k_coef_a = 0.044715f;
    const float h = __half2float(__float2half_rn(x));
    const float g = 0.5f * h * (1.0f + tanhf(k_sqrt_2_over_pi * h * fmaf(k_coef_a * h, h, 1.0f)));
    return __half2float(__float2half_rn(g));
}

__global__ void gelu_kernel(const float * x, float * y, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    y[i] = v <= -10.0f ? 0.0f : v >= 10.0f ? v : gelu_f16(v);
}

__global__ void add_kernel(const float * a, const float * b, float * y, int64_t n, int64_t n_b) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a[i] + b[i % n_b];
}

__global__ void mul_kernel(const float * a, const float * b, float * y, int64_t n, int64_t n_b) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a[i] * b[i % n_b];
}

__global__ void scale_kernel(float * x, float s, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * s;
}

}  // namespace

void rms_norm(const buffer & x, const buffer * w, const buffer & y, int64_t n_tokens, int64_t n, float eps) {
    assert(n_tokens > 0 && n > 0);
    assert(x.size() >= static_cast<size_t>(n_tokens * n) * sizeof(float) && y.size() >= x.size());
    assert(!w || w->size() >= static_cast<size_t>(n) * sizeof(float));
    rms_norm_kernel<<<static_cast<unsigned>(n_tokens), k_block, 0, as_stream(x.dev().stream())>>>(
        static_cast<const float *>(x.data()), w ? static_cast<const float *>(w->data()) : nullptr,
        static_cast<float *>(y.data()), n, eps);
}

void layer_norm(const buffer & x, const buffer * w, const buffer * b, const buffer & y, int64_t n_tokens, int64_t n,
                float eps) {
    assert(n_tokens > 0 && n > 0);
    assert(x.size() >= static_cast<size_t>(n_tokens * n) * sizeof(float));
    assert(y.size() >= static_cast<size_t>(n_tokens * n) * sizeof(float));
    assert(!w || w->size() >= static_cast<size_t>(n) * sizeof(float));
    assert(!b || b->size() >= static_cast<size_t>(n) * sizeof(float));
    layer_norm_kernel<<<static_cast<unsigned>(n_tokens), k_block, 0, as_stream(x.dev().stream())>>>(
        static_cast<const float *>(x.data()), w ? static_cast<const float *>(w->data()) : nullptr,
        b ? static_cast<const float *>(b->data()) : nullptr, static_cast<float *>(y.data()), n, eps);
}

void rope(const buffer & x, const buffer & pos, int64_t n_tokens, int64_t n_head, int64_t head_dim, const rope_params & p,
          const buffer * freq_factors) {
    assert(p.n_rot > 0 && p.n_rot % 2 == 0 && p.n_rot <= head_dim);
    assert(x.size() >= static_cast<size_t>(n_tokens * n_head * head_dim) * sizeof(float));
    assert(pos.size() >= static_cast<size_t>(n_tokens) * sizeof(int32_t));
    assert(!freq_factors || freq_factors->size() >= static_cast<size_t>(p.n_rot / 2) * sizeof(float));
    // The same f32 power the CPU takes (kernels/ops.cpp), so the angles are its angles.
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    const dim3 grid(groups(p.n_rot / 2), static_cast<unsigned>(n_head), static_cast<unsigned>(n_tokens));
    rope_kernel<<<grid, k_block, 0, as_stream(x.dev().stream())>>>(
        static_cast<float *>(x.data()), static_cast<const int32_t *>(pos.data()),
        freq_factors ? static_cast<const float *>(freq_factors->data()) : nullptr, n_head, head_dim, p.n_rot, theta_scale,
        p.freq_scale, p.attn_factor, p.mode == rope_mode::neox);
}

void swiglu(const buffer & gate, const buffer & up, const buffer & y, int64_t n) {
    assert(n > 0);
    assert(gate.size() >= static_cast<size_t>(n) * sizeof(float) && up.size() >= static_cast<size_t>(n) * sizeof(float));
    assert(y.size() >= static_cast<size_t>(n) * sizeof(float));
    swiglu_kernel<<<groups(n), k_block, 0, as_stream(gate.dev().stream())>>>(
        static_cast<const float *>(gate.data()), static_cast<const float *>(up.data()), static_cast<float *>(y.data()), n);
}

void silu(const buffer & x, const buffer & y, int64_t n) {
    assert(n > 0);
    assert(x.size() >= static_cast<size_t>(n) * sizeof(float) && y.size() >= static_cast<size_t>(n) * sizeof(float));
    silu_kernel<<<groups(n), k_block, 0, as_stream(x.dev().stream())>>>(static_cast<const float *>(x.data()),
                                                                          static_cast<float *>(y.data()), n);
}

void gelu(const buffer & x, const buffer & y, int64_t n) {
    assert(n > 0);
    assert(x.size() >= static_cast<size_t>(n) * sizeof(float) && y.size() >= static_cast<size_t>(n) * sizeof(float));
    gelu_kernel<<<groups(n), k_block, 0, as_stream(x.dev().stream())>>>(static_cast<const float *>(x.data()),
                                                                          static_cast<float *>(y.data()), n);
}

void add(const buffer & a, const buffer & b, const buffer & y, int64_t n, int64_t n_b) {
    assert(n > 0 && n_b > 0 && n % n_b == 0);
    assert(a.size() >= static_cast<size_t>(n) * sizeof(float) && y.size() >= static_cast<size_t>(n) * sizeof(float));
    assert(b.size() >= static_cast<size_t>(n_b) * sizeof(float));
    add_kernel<<<groups(n), k_block, 0, as_stream(a.dev().stream())>>>(
        static_cast<const float *>(a.data()), static_cast<const float *>(b.data()), static_cast<float *>(y.data()), n, n_b);
}

void mul(const buffer & a, const buffer & b, const buffer & y, int64_t n, int64_t n_b) {
    assert(n > 0 && n_b > 0 && n % n_b == 0);
    assert(a.size() >= static_cast<size_t>(n) * sizeof(float) && b.size() >= static_cast<size_t>(n_b) * sizeof(float));
    assert(y.size() >= static_cast<size_t>(n) * sizeof(float));
    mul_kernel<<<groups(n), k_block, 0, as_stream(a.dev().stream())>>>(
        static_cast<const float *>(a.data()), static_cast<const float *>(b.data()), static_cast<float *>(y.data()), n, n_b);
}

void scale(const buffer & x, float s, int64_t n) {
    assert(n > 0 && x.size() >= static_cast<size_t>(n) * sizeof(float));
    scale_kernel<<<groups(n), k_block, 0, as_stream(x.dev().stream())>>>(static_cast<float *>(x.data()), s, n);
}

}  // namespace hearth::kernels::cuda
