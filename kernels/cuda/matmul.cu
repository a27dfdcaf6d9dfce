// Matrix products. Quantized weights: one warp per weight row, k_warps rows per block, and per
// block either k_tokens activation rows (a plain product) or one (token, pick) pair (experts). A
// warp walks its row four quant blocks at a time, one per group of 8 lanes; each lane decodes its
// share of the block into packed int8 once for all the tokens and multiplies it with __dp4a. The
// group adds its lanes' integer sums (exact: the CPU's block sums, whatever the split), its first
// lane scales them as the CPU's vec_dot does and keeps the f32 sum; the warp adds the groups'.
// q8_0, q4_0, q5_0 take q8_0 activations (quantize_q8_0, the caller's); q4_K and q6_K take q8_K,
// which the product makes itself in the device's scratch (quantize_q8_K, as the CPU's
// quantize_row). f16 and f32 weights: one block of k_block threads per (row, k_tokens tokens), as
// kernels/vulkan/shaders/matmul.comp. Expert products run the same kernels with the weight row
// offset by the pick's expert, so each is the plain product's arithmetic for that expert's rows.
#include <cassert>
#include <cuda_fp16.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/formats.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/reduce.cuh"

namespace hearth::kernels::cuda {
namespace {

constexpr int k_tokens = 8;
constexpr int k_warps = 4;   // weight rows per block of the quantized kernels

struct q8_act {   // one block of activations in q8_0
    float d;
    int8_t q[32];
};
static_assert(sizeof(q8_act) == 36);

struct q8k_act {   // one super-block of activations in q8_K: kernels/blocks.h's block_q8_K
    float d;
    int8_t q[256];
    int16_t bsums[16];   // sums of each 16 quants
};
static_assert(sizeof(q8k_act) == 292);

__device__ float half_bits(uint16_t h) { return __half2float(__ushort_as_half(h)); }

__device__ float round_f16(float x) { return __half2float(__float2half_rn(x)); }

__device__ uint16_t load_u16(const uint8_t * p) { return *reinterpret_cast<const uint16_t *>(p); }   // p even

// Four bytes from a 2-byte aligned address (the blocks of q8_0, q4_0, q5_0 and q6_K are an even
// number of bytes, not a multiple of 4), little-endian.
__device__ uint32_t load_u32_2(const uint8_t * p) {
    const auto * h = reinterpret_cast<const uint16_t *>(p);
    return static_cast<uint32_t>(h[0]) | (static_cast<uint32_t>(h[1]) << 16);
}

__device__ int load_i32_4(const void * p) { return *static_cast<const int *>(p); }   // p 4-byte aligned

// Sums over the 8 lanes of a group and over the warp (every lane of the warp calls them).
__device__ int group_sum(int v) {
    for (int o = 4; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Bytes of a block of q8_0, q4_0, q5_0, q4_K or q6_K.
template <tensor_type T>
constexpr int k_block_bytes = T == tensor_type::q8_0   ? 34
                              : T == tensor_type::q4_0 ? 18
                              : T == tensor_type::q5_0 ? 22
                              : T == tensor_type::q4_k ? 144
                                                       : 210;   // q6_K

// Lane `sub` (0..7) of a 32-element block: its values 4 sub .. 4 sub + 3 as packed int8 (the
// activation int at the same offset of the q8_0 block is their partner).
//   q8_0: d, int8[32];
//   q4_0: d, 16 bytes: element j in the low nibble of byte j, element j + 16 in its high one, minus 8;
//   q5_0: d, qh (bit j: the fifth bit of element j), 16 bytes of nibbles as q4_0, minus 16.
template <tensor_type T>
__device__ int legacy_quants(const uint8_t * b, int sub) {
    if constexpr (T == tensor_type::q8_0) {
        return static_cast<int>(load_u32_2(b + 2 + 4 * sub));
    } else {
        const int qs_offset = T == tensor_type::q4_0 ? 2 : 6;
        const uint32_t bytes = load_u32_2(b + qs_offset + 4 * (sub & 3));
        const uint32_t nib = sub < 4 ? bytes & 0x0f0f0f0fu : (bytes >> 4) & 0x0f0f0f0fu;
        if constexpr (T == tensor_type::q4_0) return static_cast<int>(__vsub4(nib, 0x08080808u));
        const uint32_t hb = (load_u32_2(b + 2) >> (4 * sub)) & 0x0fu;   // the fifth bits of the 4 values
        const uint32_t h = ((hb & 1u) << 4) | ((hb & 2u) << 11) | ((hb & 4u) << 18) | ((hb & 8u) << 25);
        return static_cast<int>(__vsub4(nib | h, 0x10101010u));
    }
}

// The 6-bit scale and min of sub-block j (0..7) of a q4_K block (kernels/blocks.h k_scale_min).
__device__ void k_scale_min(int j, const uint8_t * q, int & sc, int & m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// Which rows a warp multiplies. A plain product: weight row r times the k_tokens activation rows
// from blockIdx.y * k_tokens (fewer at the end), into y[t][r] of rows of n_rows. An expert product
// (ids set): pair p = pair_first + blockIdx.y, (token p / n_used, pick p % n_used), weight row
// ids[p] * expert_rows + r times activation row p (x per pick) or p / n_used, into y[p][r] of rows
// of expert_rows.
struct product_rows {
    const int32_t * ids;   // [n_pairs] experts; null: a plain product
    int64_t n_tokens;      // plain: activation rows
    int64_t n_rows;        // plain: the weight's rows, the length of a row of y
    int64_t expert_rows;   // experts: the rows of one expert, the length of a row of y
    int64_t n_used;        // experts: picks per token
    int64_t pair_first;    // experts: the pair of blockIdx.y == 0 (grids of more pairs than grid.y holds)
    bool x_per_pick;       // experts: x has a row per pair, not per token
    __host__ __device__ int64_t out_rows() const { return ids ? expert_rows : n_rows; }
};

struct block_rows {
    int64_t w_row;    // the weight row
    int64_t x_first;  // the first activation row
    int64_t y_first;  // the first output row
    int64_t y_stride; // floats per output row
    int nt;           // activation rows (1 for experts)
};

__device__ block_rows rows_of(const product_rows & pr, int64_t r) {
    if (!pr.ids) {
        const int64_t t0 = static_cast<int64_t>(blockIdx.y) * k_tokens;
        const int nt = static_cast<int>(pr.n_tokens - t0 < k_tokens ? pr.n_tokens - t0 : k_tokens);
        return {r, t0, t0, pr.n_rows, nt};
    }
    const int64_t p = pr.pair_first + blockIdx.y;
    const int64_t e = pr.ids[p];
    return {e * pr.expert_rows + r, pr.x_per_pick ? p : p / pr.n_used, p, pr.expert_rows, 1};
}

// q8_0, q4_0, q5_0 weights on q8_0 activations: per block the CPU's sumi * (d_w * d_x).
template <tensor_type T>
__global__ void matmul_legacy_kernel(const uint8_t * w, size_t row_bytes, const q8_act * xq, float * y, int64_t n_cols,
                                     product_rows pr) {
    const int64_t r = static_cast<int64_t>(blockIdx.x) * k_warps + threadIdx.x / 32;
    if (r >= pr.out_rows()) return;   // the whole warp
    const int lane = threadIdx.x % 32, grp = lane / 8, sub = lane % 8;
    const block_rows b = rows_of(pr, r);
    const int64_t n_blocks = n_cols / 32;
    const uint8_t * row = w + b.w_row * row_bytes;
    float acc[k_tokens] = {};
    for (int64_t c0 = 0; c0 < n_blocks; c0 += 4) {
        const int64_t c = c0 + grp;
        const bool live = c < n_blocks;
        int wq = 0;
        float wd = 0.0f;
        if (live) {
            const uint8_t * blk = row + c * k_block_bytes<T>;
            wq = legacy_quants<T>(blk, sub);
            wd = half_bits(load_u16(blk));
        }
#pragma unroll
        for (int t = 0; t < k_tokens; ++t) {
            if (t >= b.nt) break;
            const q8_act * a = xq + (b.x_first + t) * n_blocks + c;
            const int s = group_sum(live ? __dp4a(wq, load_i32_4(a->q + 4 * sub), 0) : 0);
            if (live && sub == 0) acc[t] += static_cast<float>(s) * (wd * a->d);
        }
    }
#pragma unroll
    for (int t = 0; t < k_tokens; ++t) {
        if (t >= b.nt) break;
        const float s = warp_sum(acc[t]);
        if (lane == 0) y[(b.y_first + t) * b.y_stride + r] = s;
    }
}

// q4_K and q6_K weights on q8_K activations, a super-block of 256 per group, 32 values per lane,
// as the CPU's vec_dot_q4_K / vec_dot_q6_K (kernels/cpu/generic/quant_kquants.cpp):
//   q4_K: lane s takes sub-block s (its nibbles: the low ones of bytes 32 (s / 2).. for even s,
//         the high ones for odd s): sumi += sc_s * (q . q8), summs += m_s * (bsums[2s] + bsums[2s+1]);
//         per super-block d * sumi - dmin * summs, d = f16 d * d_x, dmin = f16 dmin * d_x;
//   q6_K: lane s takes half s / 4, quarter s % 4 (two sub-blocks of 16, each with its int8 scale):
//         sumi += sc * ((ql nibble | qh 2 bits << 4) - 32) . q8; per super-block (f16 d * d_x) * sumi.
template <tensor_type T>
__global__ void matmul_k_kernel(const uint8_t * w, size_t row_bytes, const q8k_act * xq, float * y, int64_t n_cols,
                                product_rows pr) {
    const int64_t r = static_cast<int64_t>(blockIdx.x) * k_warps + threadIdx.x / 32;
    if (r >= pr.out_rows()) return;   // the whole warp
    const int lane = threadIdx.x % 32, grp = lane / 8, sub = lane % 8;
    const block_rows b = rows_of(pr, r);
    const int64_t n_blocks = n_cols / 256;
    const uint8_t * row = w + b.w_row * row_bytes;
    float acc[k_tokens] = {};
    for (int64_t c0 = 0; c0 < n_blocks; c0 += 4) {
        const int64_t c = c0 + grp;
        const bool live = c < n_blocks;
        const uint8_t * blk = row + c * k_block_bytes<T>;
        int wq[8] = {};
        int sc0 = 0, sc1 = 0;   // q4_K: the scale and the min of the sub-block; q6_K: the two scales
        int act_offset = 0;     // the lane's first value in the super-block
        float d = 0.0f, dmin = 0.0f;
        if (live) {
            if constexpr (T == tensor_type::q4_k) {
                k_scale_min(sub, blk + 4, sc0, sc1);
                const uint8_t * qs = blk + 16 + 32 * (sub / 2);   // 16-byte aligned: blocks of 144 bytes
                for (int i = 0; i < 8; ++i) {
                    const auto v = static_cast<uint32_t>(load_i32_4(qs + 4 * i));
                    wq[i] = static_cast<int>(sub % 2 == 0 ? v & 0x0f0f0f0fu : (v >> 4) & 0x0f0f0f0fu);
                }
                act_offset = 32 * sub;
                d = half_bits(load_u16(blk));
                dmin = half_bits(load_u16(blk + 2));
            } else {
                const int half = sub / 4, qq = sub % 4;
                const uint8_t * ql = blk + 64 * half + 32 * (qq & 1);
                const uint8_t * qh = blk + 128 + 32 * half;
                for (int i = 0; i < 8; ++i) {
                    const uint32_t l4 = load_u32_2(ql + 4 * i);
                    const uint32_t nib = qq < 2 ? l4 & 0x0f0f0f0fu : (l4 >> 4) & 0x0f0f0f0fu;
                    const uint32_t hb = ((load_u32_2(qh + 4 * i) >> (2 * qq)) & 0x03030303u) << 4;
                    wq[i] = static_cast<int>(__vsub4(nib | hb, 0x20202020u));
                }
                const auto * sc = reinterpret_cast<const int8_t *>(blk + 192) + 8 * half + 2 * qq;
                sc0 = sc[0];   // values 0..15 of the lane
                sc1 = sc[1];   // values 16..31
                act_offset = 128 * half + 32 * qq;
                d = half_bits(load_u16(blk + 208));
            }
        }
#pragma unroll
        for (int t = 0; t < k_tokens; ++t) {
            if (t >= b.nt) break;
            const q8k_act * a = xq + (b.x_first + t) * n_blocks + c;
            int sumi = 0, summs = 0;
            if (live) {
                const int8_t * aq = a->q + act_offset;
                if constexpr (T == tensor_type::q4_k) {
                    int s = 0;
                    for (int i = 0; i < 8; ++i) s = __dp4a(wq[i], load_i32_4(aq + 4 * i), s);
                    sumi = sc0 * s;
                    summs = sc1 * (a->bsums[2 * sub] + a->bsums[2 * sub + 1]);
                } else {
                    int s0 = 0, s1 = 0;
                    for (int i = 0; i < 4; ++i) s0 = __dp4a(wq[i], load_i32_4(aq + 4 * i), s0);
                    for (int i = 4; i < 8; ++i) s1 = __dp4a(wq[i], load_i32_4(aq + 4 * i), s1);
                    sumi = sc0 * s0 + sc1 * s1;
                }
            }
            sumi = group_sum(sumi);
            if constexpr (T == tensor_type::q4_k) summs = group_sum(summs);
            if (live && sub == 0) {
                if constexpr (T == tensor_type::q4_k) {
                    const float dx = d * a->d, mx = dmin * a->d;
                    acc[t] += dx * static_cast<float>(sumi) - mx * static_cast<float>(summs);
                } else {
                    acc[t] += (d * a->d) * static_cast<float>(sumi);
                }
            }
        }
    }
#pragma unroll
    for (int t = 0; t < k_tokens; ++t) {
        if (t >= b.nt) break;
        const float s = warp_sum(acc[t]);
        if (lane == 0) y[(b.y_first + t) * b.y_stride + r] = s;
    }
}

// f16 weights: the activations rounded to f16, each product exact in f32, the sum in double (the
// CPU's exact sum); f32 weights: f32 products and sums. One block per row (blockIdx.x).
template <tensor_type T>
__global__ void matmul_plain_kernel(const uint8_t * w, size_t row_bytes, const float * x, float * y, int64_t n_cols,
                                    product_rows pr) {
    const block_rows b = rows_of(pr, blockIdx.x);
    const int nt = b.nt;
    using acc_t = std::conditional_t<T == tensor_type::f16, double, float>;
    acc_t acc[k_tokens] = {};
    const uint8_t * row = w + b.w_row * row_bytes;
    for (int64_t i = threadIdx.x; i < n_cols; i += k_block) {
        float wv;
        if constexpr (T == tensor_type::f16) wv = half_bits(load_u16(row + 2 * i));
        else wv = reinterpret_cast<const float *>(row)[i];
        for (int t = 0; t < nt; ++t) {
            const float xv = x[(b.x_first + t) * n_cols + i];
            if constexpr (T == tensor_type::f16) acc[t] += static_cast<double>(wv * round_f16(xv));
            else acc[t] += wv * xv;
        }
    }
    for (int t = 0; t < nt; ++t) {
        const acc_t s = block_sum(acc[t]);
        if (threadIdx.x == 0) y[(b.y_first + t) * b.y_stride + blockIdx.x] = static_cast<float>(s);
    }
}

// The CPU's quantize_row(q8_0) of activations: d = amax / 127 kept as its f16, quants
// round(x * 127 / amax) to nearest even. One thread per block.
__global__ void quantize_q8_0_kernel(const float * x, q8_act * out, int64_t n_blocks) {
    const int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (b >= n_blocks) return;
    const float * xb = x + b * 32;
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = fmaxf(amax, fabsf(xb[j]));
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    out[b].d = round_f16(d);
    for (int j = 0; j < 32; ++j) out[b].q[j] = static_cast<int8_t>(__float2int_rn(xb[j] * id));
}

// The CPU's quantize_row(q8_K): per 256 values the first one of largest magnitude, max, maps to
// -127 (iscale = -127 / max), quants min(127, round(iscale * x)) to nearest even, d = 1 / iscale,
// bsums the sums of each 16 quants; an all-zero super-block is all zeros. One warp per
// super-block, 8 consecutive values per lane.
__global__ void quantize_q8_K_kernel(const float * x, q8k_act * out, int64_t n_blocks) {
    const int64_t b = static_cast<int64_t>(blockIdx.x) * k_warps + threadIdx.x / 32;
    if (b >= n_blocks) return;   // the whole warp
    const int lane = threadIdx.x % 32;
    const float * xb = x + b * 256;
    float v[8];
    float amax = 0.0f;
    int first = 256;   // the index of amax's element; 256: none (all zeros so far)
    for (int k = 0; k < 8; ++k) {
        v[k] = xb[8 * lane + k];
        if (fabsf(v[k]) > amax) {
            amax = fabsf(v[k]);
            first = 8 * lane + k;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {   // the largest magnitude, ties to the lower index
        const float a2 = __shfl_xor_sync(0xffffffffu, amax, o);
        const int f2 = __shfl_xor_sync(0xffffffffu, first, o);
        if (a2 > amax || (a2 == amax && f2 < first)) {
            amax = a2;
            first = f2;
        }
    }
    q8k_act & y = out[b];
    if (amax == 0.0f) {
        for (int k = 0; k < 8; ++k) y.q[8 * lane + k] = 0;
        if (lane < 16) y.bsums[lane] = 0;
        if (lane == 0) y.d = 0.0f;
        return;
    }
    const float iscale = -127.0f / xb[first];
    int sum = 0;
    for (int k = 0; k < 8; ++k) {
        const int q = min(127, __float2int_rn(iscale * v[k]));
        y.q[8 * lane + k] = static_cast<int8_t>(q);
        sum += q;
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);   // lanes 2g and 2g + 1 hold the 16 quants of group g
    if (lane % 2 == 0) y.bsums[lane / 2] = static_cast<int16_t>(sum);
    if (lane == 0) y.d = 1.0f / iscale;
}

bool takes_q8_K(tensor_type t) { return t == tensor_type::q4_k || t == tensor_type::q6_k; }

size_t q8_K_bytes(int64_t n_rows, int64_t n_cols) {
    return static_cast<size_t>(n_rows) * static_cast<size_t>(n_cols / 256) * sizeof(q8k_act);
}

// x's n_rows rows in q8_K in the device's scratch; nullptr where it cannot be had (finish() says why).
const q8k_act * quantize_q8_K(const buffer & x, int64_t n_rows, int64_t n_cols) {
    auto * out = static_cast<q8k_act *>(x.dev().scratch(q8_K_bytes(n_rows, n_cols)));
    if (!out) return nullptr;
    const int64_t n_blocks = n_rows * (n_cols / 256);
    const auto grid = static_cast<unsigned>((n_blocks + k_warps - 1) / k_warps);
    quantize_q8_K_kernel<<<grid, 32 * k_warps, 0, as_stream(x.dev().stream())>>>(static_cast<const float *>(x.data()),
                                                                                  out, n_blocks);
    return out;
}

}  // namespace

bool supports_weight(tensor_type t) { return declares_weight(t); }

bool takes_q8_0_activations(tensor_type t) {
    return t == tensor_type::q8_0 || t == tensor_type::q4_0 || t == tensor_type::q5_0;
}

size_t q8_0_activation_bytes(int64_t n_tokens, int64_t n_cols) {
    return static_cast<size_t>(n_tokens) * static_cast<size_t>(n_cols / 32) * sizeof(q8_act);
}

void quantize_q8_0(const buffer & x, const buffer & x_q8, int64_t n_tokens, int64_t n_cols) {
    assert(n_cols % 32 == 0);
    assert(x.size() >= static_cast<size_t>(n_tokens * n_cols) * sizeof(float));
    assert(x_q8.size() >= q8_0_activation_bytes(n_tokens, n_cols));
    const int64_t n_blocks = n_tokens * n_cols / 32;
    const auto grid = static_cast<unsigned>((n_blocks + k_block - 1) / k_block);
    quantize_q8_0_kernel<<<grid, k_block, 0, as_stream(x.dev().stream())>>>(
        static_cast<const float *>(x.data()), static_cast<q8_act *>(x_q8.data()), n_blocks);
}

namespace {

// The activations w's kernel reads: x_q8 (q8_0, the caller's; checked by the callers), x's x_rows
// rows made q8_K here (q4_K, q6_K), or x itself; nullptr where the q8_K scratch cannot be had.
const void * activations(const weight_buffer & w, const buffer & x, int64_t x_rows, const buffer * x_q8) {
    if (takes_q8_0_activations(w.type)) return x_q8->data();
    if (takes_q8_K(w.type)) return quantize_q8_K(x, x_rows, w.n_cols);
    return x.data();
}

// Launches the kernel for w's type over act (as activations() gave it) with the rows pr names and
// grid_y token blocks or pairs.
void launch_product(const weight_buffer & w, const buffer & x, const void * act, const buffer & y, unsigned grid_y,
                    const product_rows & pr) {
    const cudaStream_t s = as_stream(x.dev().stream());
    const auto * wp = static_cast<const uint8_t *>(w.data->data());
    auto * yp = static_cast<float *>(y.data());
    const dim3 quant_grid(static_cast<unsigned>((pr.out_rows() + k_warps - 1) / k_warps), grid_y);
    constexpr unsigned quant_threads = 32 * k_warps;
    const auto * x8 = static_cast<const q8_act *>(act);
    const auto * xk = static_cast<const q8k_act *>(act);
    const auto * xf = static_cast<const float *>(act);
    switch (w.type) {
    case tensor_type::q8_0:
        matmul_legacy_kernel<tensor_type::q8_0><<<quant_grid, quant_threads, 0, s>>>(wp, w.row_bytes, x8, yp, w.n_cols, pr);
        break;
    case tensor_type::q4_0:
        matmul_legacy_kernel<tensor_type::q4_0><<<quant_grid, quant_threads, 0, s>>>(wp, w.row_bytes, x8, yp, w.n_cols, pr);
        break;
    case tensor_type::q5_0:
        matmul_legacy_kernel<tensor_type::q5_0><<<quant_grid, quant_threads, 0, s>>>(wp, w.row_bytes, x8, yp, w.n_cols, pr);
        break;
    case tensor_type::q4_k:
        matmul_k_kernel<tensor_type::q4_k><<<quant_grid, quant_threads, 0, s>>>(wp, w.row_bytes, xk, yp, w.n_cols, pr);
        break;
    case tensor_type::q6_k:
        matmul_k_kernel<tensor_type::q6_k><<<quant_grid, quant_threads, 0, s>>>(wp, w.row_bytes, xk, yp, w.n_cols, pr);
        break;
    case tensor_type::f16:
        matmul_plain_kernel<tensor_type::f16><<<dim3(static_cast<unsigned>(pr.out_rows()), grid_y), k_block, 0, s>>>(
            wp, w.row_bytes, xf, yp, w.n_cols, pr);
        break;
    default:   // f32
        matmul_plain_kernel<tensor_type::f32><<<dim3(static_cast<unsigned>(pr.out_rows()), grid_y), k_block, 0, s>>>(
            wp, w.row_bytes, xf, yp, w.n_cols, pr);
        break;
    }
}

// CUDA's limit on grid.y: expert products launch at most this many pairs at a time.
constexpr int64_t k_max_grid_y = 65535;

// The rows of a weight of this type are whole quant blocks (read by the asserts).
[[maybe_unused]] bool whole_blocks(const weight_buffer & w) {
    if (takes_q8_K(w.type)) return w.n_cols % 256 == 0;
    return !takes_q8_0_activations(w.type) || w.n_cols % 32 == 0;
}

}  // namespace

void matmul(const weight_buffer & w, const buffer & x, const buffer & y, int64_t n_tokens, const buffer * x_q8) {
    assert(supports_weight(w.type) && n_tokens > 0 && whole_blocks(w));
    assert(w.data->size() >= static_cast<size_t>(w.n_rows) * w.row_bytes);
    assert(x.size() >= static_cast<size_t>(n_tokens * w.n_cols) * sizeof(float));
    assert(y.size() >= static_cast<size_t>(n_tokens * w.n_rows) * sizeof(float));
    assert(!takes_q8_0_activations(w.type) || (x_q8 && x_q8->size() >= q8_0_activation_bytes(n_tokens, w.n_cols)));
    const void * act = activations(w, x, n_tokens, x_q8);
    if (!act) return;
    assert((n_tokens + k_tokens - 1) / k_tokens <= k_max_grid_y);   // one batch (n_batch <= 4096) is far below
    const auto grid_y = static_cast<unsigned>((n_tokens + k_tokens - 1) / k_tokens);
    launch_product(w, x, act, y, grid_y, product_rows{nullptr, n_tokens, w.n_rows, 0, 0, 0, false});
}

void matmul_experts(const weight_buffer & w, int64_t expert_rows, const buffer & x, bool x_per_pick, const buffer & ids,
                    const buffer & y, int64_t n_tokens, int64_t n_used, const buffer * x_q8) {
    assert(supports_weight(w.type) && n_tokens > 0 && n_used > 0 && whole_blocks(w));
    assert(expert_rows > 0 && w.n_rows % expert_rows == 0);
    assert(w.data->size() >= static_cast<size_t>(w.n_rows) * w.row_bytes);
    const int64_t n_pairs = n_tokens * n_used;
    const int64_t x_rows = x_per_pick ? n_pairs : n_tokens;
    assert(x.size() >= static_cast<size_t>(x_rows * w.n_cols) * sizeof(float));
    assert(ids.size() >= static_cast<size_t>(n_pairs) * sizeof(int32_t));
    assert(y.size() >= static_cast<size_t>(n_pairs * expert_rows) * sizeof(float));
    assert(!takes_q8_0_activations(w.type) || (x_q8 && x_q8->size() >= q8_0_activation_bytes(x_rows, w.n_cols)));
    const auto * id = static_cast<const int32_t *>(ids.data());
    const void * act = activations(w, x, x_rows, x_q8);
    if (!act) return;
    for (int64_t p0 = 0; p0 < n_pairs; p0 += k_max_grid_y) {
        const int64_t n = n_pairs - p0 < k_max_grid_y ? n_pairs - p0 : k_max_grid_y;
        launch_product(w, x, act, y, static_cast<unsigned>(n),
                       product_rows{id, 0, 0, expert_rows, n_used, p0, x_per_pick});
    }
}

}  // namespace hearth::kernels::cuda
