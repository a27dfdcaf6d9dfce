// Sums and maxima over a block of k_block threads: warp shuffles, then shared memory across warps.
// Every thread of the block must call them (they synchronize); every thread gets the result.
#pragma once

namespace hearth::kernels::cuda {

constexpr int k_block = 64;

template <class T, class Op>
__device__ T block_reduce(T v, Op op) {
    __shared__ T partial[k_block / 32];
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();   // partial may still be read by a previous call
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    T r = partial[0];
    for (int w = 1; w < k_block / 32; ++w) r = op(r, partial[w]);
    return r;
}

template <class T>
__device__ T block_sum(T v) {
    return block_reduce(v, [](T a, T b) { return a + b; });
}

__device__ inline float block_max(float v) {
    return block_reduce(v, [](float a, float b) { return fmaxf(a, b); });
}

}  // namespace hearth::kernels::cuda
