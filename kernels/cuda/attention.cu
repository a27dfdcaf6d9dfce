// The KV cache: appending a batch's rows in f16, q8_0 or q4_0 (the bytes the CPU's quantize_row
// writes), and attention over K and V rows of any of those types (kernels/vulkan/shaders/
// attention.comp): one block per (head, token), the scores in a scratch row, max and sum as block
// reductions, everything f32, the cache's values decoded as kernels/cpu/generic dequantizes them.
#include <cassert>
#include <cuda_fp16.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/formats.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/reduce.cuh"

namespace hearth::kernels::cuda {
namespace {

constexpr int k_max_head_dim = 256;

__device__ uint16_t load_u16(const uint8_t * p) { return *reinterpret_cast<const uint16_t *>(p); }   // p even
__device__ float half_bits(uint16_t h) { return __half2float(__ushort_as_half(h)); }

__device__ void store_half(uint8_t * p, float v) {
    const uint16_t h = __half_as_ushort(__float2half_rn(v));
    p[0] = static_cast<uint8_t>(h & 0xff);
    p[1] = static_cast<uint8_t>(h >> 8);
}

__global__ void kv_append_f16_kernel(const float * src, __half * cache, int64_t first_pos, int64_t n_embd_kv) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t t = blockIdx.y;
    if (i < n_embd_kv) cache[(first_pos + t) * n_embd_kv + i] = __float2half_rn(src[t * n_embd_kv + i]);
}

// One thread per 32-value block of a row (blockIdx.y the token), as kernels/cpu/generic/quant_legacy.cpp:
//   q8_0: d = amax / 127 kept in f16, quants round(x * 127 / amax) to nearest even;
//   q4_0: d = (the first value of largest magnitude) / -8 in f16, quants min(15, int(x / d + 8.5)),
//         element j in the low nibble of byte j, element j + 16 in its high nibble.
template <tensor_type T>
__global__ void kv_append_q_kernel(const float * src, uint8_t * cache, int64_t first_pos, int64_t n_embd_kv) {
    constexpr int64_t bytes = T == tensor_type::q8_0 ? 34 : 18;
    const int64_t blk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t t = blockIdx.y;
    const int64_t n_blocks = n_embd_kv / 32;
    if (blk >= n_blocks) return;
    const float * x = src + t * n_embd_kv + blk * 32;
    uint8_t * out = cache + ((first_pos + t) * n_blocks + blk) * bytes;
    if constexpr (T == tensor_type::q8_0) {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = fmaxf(amax, fabsf(x[j]));
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        store_half(out, d);
        for (int j = 0; j < 32; ++j) out[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(__float2int_rn(x[j] * id)));
    } else {
        float amax = 0.0f;
        float mx = x[0];
        for (int j = 0; j < 32; ++j) {
            if (amax < fabsf(x[j])) {
                amax = fabsf(x[j]);
                mx = x[j];
            }
        }
        const float d = mx / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        store_half(out, d);
        for (int j = 0; j < 16; ++j) {
            const float x0 = x[j] * id;
            const float x1 = x[j + 16] * id;
            const int q0 = min(15, static_cast<int>(x0 + 8.5f));   // truncation, as the CPU's cast
            const int q1 = min(15, static_cast<int>(x1 + 8.5f));
            out[2 + j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

// Element e (0 <= e < row_elems) of position pos's row of a cache of type T.
template <tensor_type T>
__device__ float kv_value(const uint8_t * rows, int64_t pos, int64_t row_elems, int64_t e) {
    if constexpr (T == tensor_type::f16) {
        return __half2float(reinterpret_cast<const __half *>(rows)[pos * row_elems + e]);
    } else if constexpr (T == tensor_type::q8_0) {
        const uint8_t * b = rows + (pos * (row_elems / 32) + e / 32) * 34;
        return static_cast<float>(static_cast<int8_t>(b[2 + e % 32])) * half_bits(load_u16(b));
    } else {
        const uint8_t * b = rows + (pos * (row_elems / 32) + e / 32) * 18;
        const int q = b[2 + e % 16];
        return half_bits(load_u16(b)) * static_cast<float>((e % 32 < 16 ? q & 0x0f : q >> 4) - 8);
    }
}

template <tensor_type K, tensor_type V>
__global__ void attention_kernel(const float * q, const uint8_t * k, const uint8_t * v, const int32_t * n_kv,
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
    const int64_t row_elems = p.n_head_kv * p.head_dim;
    const int64_t head = g * p.head_dim;
    float * sc = scores + (t * p.n_head + h) * p.n_ctx;
    float mx = -INFINITY;
    for (int64_t pos = start + tid; pos < end; pos += k_block) {
        float s = 0.0f;
        for (int64_t d = 0; d < p.head_dim; ++d) s += q_s[d] * kv_value<K>(k, pos, row_elems, head + d);
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
        for (int64_t pos = start; pos < end; ++pos) acc += sc[pos] * kv_value<V>(v, pos, row_elems, head + d);
        out[qo + d] = acc / total;
    }
}

using attention_fn = void (*)(const float *, const uint8_t *, const uint8_t *, const int32_t *, const int32_t *, float *,
                              float *, attention_shape);

template <tensor_type K>
attention_fn attention_for_v(tensor_type v) {
    if (v == tensor_type::f16) return attention_kernel<K, tensor_type::f16>;
    if (v == tensor_type::q8_0) return attention_kernel<K, tensor_type::q8_0>;
    return attention_kernel<K, tensor_type::q4_0>;
}

attention_fn attention_for(tensor_type k, tensor_type v) {
    if (k == tensor_type::f16) return attention_for_v<tensor_type::f16>(v);
    if (k == tensor_type::q8_0) return attention_for_v<tensor_type::q8_0>(v);
    return attention_for_v<tensor_type::q4_0>(v);
}

}  // namespace

bool takes_cache(tensor_type t, int64_t n_embd_kv) {
    if (!declares_cache(t) || n_embd_kv <= 0) return false;
    return t == tensor_type::f16 ? n_embd_kv % 2 == 0 : n_embd_kv % 32 == 0;
}

void kv_append(tensor_type type, const buffer & src, const buffer & cache, int32_t first_pos, int64_t n_tokens,
               int64_t n_embd_kv) {
    assert(n_tokens > 0 && n_tokens <= 65535 && first_pos >= 0 && takes_cache(type, n_embd_kv));   // grid.y
    assert(src.size() >= static_cast<size_t>(n_tokens * n_embd_kv) * sizeof(float));
    const cudaStream_t s = as_stream(src.dev().stream());
    const auto * x = static_cast<const float *>(src.data());
    if (type == tensor_type::f16) {
        assert(cache.size() >= static_cast<size_t>((first_pos + n_tokens) * n_embd_kv) * sizeof(uint16_t));
        const dim3 grid(static_cast<unsigned>((n_embd_kv + k_block - 1) / k_block), static_cast<unsigned>(n_tokens));
        kv_append_f16_kernel<<<grid, k_block, 0, s>>>(x, static_cast<__half *>(cache.data()), first_pos, n_embd_kv);
        return;
    }
    const int64_t n_blocks = n_embd_kv / 32;
    assert(cache.size() >= static_cast<size_t>((first_pos + n_tokens) * n_blocks) * (type == tensor_type::q8_0 ? 34u : 18u));
    const dim3 grid(static_cast<unsigned>((n_blocks + k_block - 1) / k_block), static_cast<unsigned>(n_tokens));
    auto * c = static_cast<uint8_t *>(cache.data());
    if (type == tensor_type::q8_0) kv_append_q_kernel<tensor_type::q8_0><<<grid, k_block, 0, s>>>(x, c, first_pos, n_embd_kv);
    else kv_append_q_kernel<tensor_type::q4_0><<<grid, k_block, 0, s>>>(x, c, first_pos, n_embd_kv);
}

void attention(tensor_type k_type, tensor_type v_type, const buffer & q, const buffer & k, const buffer & v,
               const buffer & n_kv, const buffer & kv_start, const buffer & scores, const buffer & out,
               const attention_shape & p) {
    assert(p.head_dim > 0 && p.head_dim <= k_max_head_dim && p.n_head % p.n_head_kv == 0);
    assert(p.n_tokens <= 65535);   // grid.y: one batch (n_batch <= 4096)
    assert(takes_cache(k_type, p.n_head_kv * p.head_dim) && takes_cache(v_type, p.n_head_kv * p.head_dim));
    assert(q.size() >= static_cast<size_t>(p.n_tokens * p.n_head * p.head_dim) * sizeof(float));
    assert(out.size() >= q.size());
    assert(scores.size() >= static_cast<size_t>(p.n_tokens * p.n_head * p.n_ctx) * sizeof(float));
    assert(n_kv.size() >= static_cast<size_t>(p.n_tokens) * sizeof(int32_t) && kv_start.size() >= n_kv.size());
    const dim3 grid(static_cast<unsigned>(p.n_head), static_cast<unsigned>(p.n_tokens));
    attention_for(k_type, v_type)<<<grid, k_block, 0, as_stream(q.dev().stream())>>>(
        static_cast<const float *>(q.data()), static_cast<const uint8_t *>(k.data()), static_cast<const uint8_t *>(v.data()),
        static_cast<const int32_t *>(n_kv.data()), static_cast<const int32_t *>(kv_start.data()),
        static_cast<float *>(scores.data()), static_cast<float *>(out.data()), p);
}

}  // namespace hearth::kernels::cuda
