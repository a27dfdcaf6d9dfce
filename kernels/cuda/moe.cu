// The router and the weighted sum of a mixture of experts, as inference/graph/moe.cpp computes them on
// the CPU (the expert products are matmul.cu's). The same f32 steps in the same order, so given
// the same probabilities the picks and weights are the CPU's; expf is within 2 ulp of the CPU's exp.
#include <cassert>
#include <cmath>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/reduce.cuh"

namespace hearth::kernels::cuda {
namespace {

// One block per token; its probabilities in shared memory (n_expert floats, dynamic). The softmax
// as kernels::softmax (max-subtracted exp, the sum in double, times the f32 inverse); then one
// thread picks the n_used best in order (a strict > over ascending ids keeps ties to the lower
// id), sums their probabilities in double in pick order and divides by the clamped f32 sum.
__global__ void moe_route_kernel(const float * logits, int32_t * ids, float * weights, int64_t n_expert,
                                 int64_t n_used) {
    extern __shared__ float p[];
    const int64_t t = blockIdx.x;
    const float * lr = logits + t * n_expert;
    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < n_expert; i += k_block) m = fmaxf(m, lr[i]);
    m = block_max(m);
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < n_expert; i += k_block) {
        p[i] = expf(lr[i] - m);
        s += static_cast<double>(p[i]);
    }
    const auto inv = static_cast<float>(1.0 / block_sum(s));   // block_sum synchronizes: every p[i] is written
    for (int64_t i = threadIdx.x; i < n_expert; i += k_block) p[i] = p[i] * inv;
    __syncthreads();
    if (threadIdx.x != 0) return;
    int32_t * id = ids + t * n_used;
    float * wt = weights + t * n_used;
    double sum_d = 0.0;
    for (int64_t j = 0; j < n_used; ++j) {
        int64_t best = 0;
        for (int64_t i = 1; i < n_expert; ++i)
            if (p[i] > p[best]) best = i;
        id[j] = static_cast<int32_t>(best);
        wt[j] = p[best];
        sum_d += static_cast<double>(p[best]);
        p[best] = -1.0f;   // below every probability: not picked again
    }
    const float sum = fmaxf(static_cast<float>(sum_d), 6.103515625e-5f);   // llama.cpp's clamp (an fp16 epsilon)
    for (int64_t j = 0; j < n_used; ++j) wt[j] = wt[j] / sum;
}

// One thread per (token, element): the picks' weighted outputs added in pick order, as moe.cpp
// adds its slots (x * w, then one f32 addition per further pick).
__global__ void moe_combine_kernel(const float * x, const float * weights, float * y, int64_t n_tokens, int64_t n_used,
                                   int64_t n) {
    const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= n_tokens * n) return;
    const int64_t t = k / n, i = k % n;
    const float * xt = x + t * n_used * n + i;
    const float * wt = weights + t * n_used;
    float acc = xt[0] * wt[0];
    for (int64_t j = 1; j < n_used; ++j) acc = acc + xt[j * n] * wt[j];
    y[k] = acc;
}

}  // namespace

void moe_route(const buffer & logits, const buffer & ids, const buffer & weights, int64_t n_tokens, int64_t n_expert,
               int64_t n_used) {
    assert(n_tokens > 0 && n_used > 0 && n_used <= n_expert);
    assert(logits.size() >= static_cast<size_t>(n_tokens * n_expert) * sizeof(float));
    assert(ids.size() >= static_cast<size_t>(n_tokens * n_used) * sizeof(int32_t));
    assert(weights.size() >= static_cast<size_t>(n_tokens * n_used) * sizeof(float));
    const size_t shared_bytes = static_cast<size_t>(n_expert) * sizeof(float);
    assert(shared_bytes <= 48 * 1024);   // the default limit on dynamic shared memory per block
    moe_route_kernel<<<static_cast<unsigned>(n_tokens), k_block, shared_bytes, as_stream(logits.dev().stream())>>>(
        static_cast<const float *>(logits.data()), static_cast<int32_t *>(ids.data()), static_cast<float *>(weights.data()),
        n_expert, n_used);
}

void moe_combine(const buffer & x, const buffer & weights, const buffer & y, int64_t n_tokens, int64_t n_used, int64_t n) {
    assert(n_tokens > 0 && n_used > 0 && n > 0);
    assert(x.size() >= static_cast<size_t>(n_tokens * n_used * n) * sizeof(float));
    assert(weights.size() >= static_cast<size_t>(n_tokens * n_used) * sizeof(float));
    assert(y.size() >= static_cast<size_t>(n_tokens * n) * sizeof(float));
    const int64_t n_out = n_tokens * n;
    moe_combine_kernel<<<static_cast<unsigned>((n_out + k_block - 1) / k_block), k_block, 0,
                         as_stream(x.dev().stream())>>>(static_cast<const float *>(x.data()),
                                                        static_cast<const float *>(weights.data()),
                                                        static_cast<float *>(y.data()), n_tokens, n_used, n);
}

}  // namespace hearth::kernels::cuda
