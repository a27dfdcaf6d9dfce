// The f16 KV cache: appending a batch's rows, and attention over it (kernels/vulkan/shaders/
// attention.comp): one block per (head, token), the scores in a scratch row, max and sum as block
// reductions, everything f32.
#include <cassert>
#include <cuda_fp16.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/reduce.cuh"

namespace hearth::kernels::cuda {
namespace {

constexpr int k_max_head_dim = 256;

__global__ void kv_append_kernel(const float * src, __half * cache, int64_t first_pos, int64_t n_embd_kv) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t t = blockIdx.y;
    if (i < n_embd_kv) cache[(first_pos + t) * n_embd_kv + i] = __float2half_rn(src[t * n_embd_kv + i]);
}

__global__ void attention_kernel(const float * q, const __half * k, const __half * v, const int32_t * n_kv,
                                 const int32_t * kv_start, float * scores, float * out, attention_shape p) {
    __shared__ float q_s[k_max_head_dim];
    const int64_t h = blockIdx.x, t = blockIdx.y;
    const int tid = threadIdx.x;
    const int64_t g = h / (p.n_head / p.n_head_kv);
    const int64_t qo = (t * p.n_head + h) * p.head_dim;
    const int64_t start = max(kv_start[t], 0), end = max(n_kv[t], 0);
    if (end <= start) {   // nothing to attend to: 0, the whole block
        for (int64_t d = tid; d < p.head_dim; d += k_block) out[qo + d] = 0.0f;
        return;
    }
    for (int64_t d = tid; d < p.head_dim; d += k_block) q_s[d] = q[qo + d];
    __syncthreads();
    const int64_t row_stride = p.n_head_kv * p.head_dim;
    float * sc = scores + (t * p.n_head + h) * p.n_ctx;
    float mx = -INFINITY;
    for (int64_t pos = start + tid; pos < end; pos += k_block) {
        const __half * kr = k + pos * row_stride + g * p.head_dim;
        float s = 0.0f;
        for (int64_t d = 0; d < p.head_dim; ++d) s += q_s[d] * __half2float(kr[d]);
        s *= p.scale;
        sc[pos] = s;
        mx = fmaxf(mx, s);
    }
    const float m = block_max(mx);
    float sum = 0.0f;
    for (int64_t pos = start + tid; pos < end; pos += k_block) {
        const float e = expf(sc[pos] - m);
        sc[pos] = e;
        sum += e;
    }
    const float total = block_sum(sum);   // synchronizes: every weight is written
    for (int64_t d = tid; d < p.head_dim; d += k_block) {
        float acc = 0.0f;
        for (int64_t pos = start; pos < end; ++pos) acc += sc[pos] * __half2float(v[pos * row_stride + g * p.head_dim + d]);
        out[qo + d] = acc / total;
    }
}

}  // namespace

void kv_append_f16(const buffer & src, const buffer & cache, int32_t first_pos, int64_t n_tokens, int64_t n_embd_kv) {
    assert(n_tokens > 0 && first_pos >= 0);
    assert(src.size() >= static_cast<size_t>(n_tokens * n_embd_kv) * sizeof(float));
    assert(cache.size() >= static_cast<size_t>((first_pos + n_tokens) * n_embd_kv) * sizeof(uint16_t));
    const dim3 grid(static_cast<unsigned>((n_embd_kv + k_block - 1) / k_block), static_cast<unsigned>(n_tokens));
    kv_append_kernel<<<grid, k_block, 0, as_stream(src.dev().stream())>>>(
        static_cast<const float *>(src.data()), static_cast<__half *>(cache.data()), first_pos, n_embd_kv);
}

void attention_f16(const buffer & q, const buffer & k, const buffer & v, const buffer & n_kv, const buffer & kv_start,
                   const buffer & scores, const buffer & out, const attention_shape & p) {
    assert(p.head_dim > 0 && p.head_dim <= k_max_head_dim && p.n_head % p.n_head_kv == 0);
    assert(q.size() >= static_cast<size_t>(p.n_tokens * p.n_head * p.head_dim) * sizeof(float));
    assert(out.size() >= q.size());
    assert(scores.size() >= static_cast<size_t>(p.n_tokens * p.n_head * p.n_ctx) * sizeof(float));
    assert(n_kv.size() >= static_cast<size_t>(p.n_tokens) * sizeof(int32_t) && kv_start.size() >= n_kv.size());
    const dim3 grid(static_cast<unsigned>(p.n_head), static_cast<unsigned>(p.n_tokens));
    attention_kernel<<<grid, k_block, 0, as_stream(q.dev().stream())>>>(
        static_cast<const float *>(q.data()), static_cast<const __half *>(k.data()), static_cast<const __half *>(v.data()),
        static_cast<const int32_t *>(n_kv.data()), static_cast<const int32_t *>(kv_start.data()),
        static_cast<float *>(scores.data()), static_cast<float *>(out.data()), p);
}

}  // namespace hearth::kernels::cuda
