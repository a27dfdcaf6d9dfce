// Matrix products: one block of k_block threads per (weight row, block of k_tokens tokens), as
// kernels/vulkan/shaders/matmul.comp; the weight row is decoded in registers once per 32-element
// block for all the tokens, each thread takes every k_block-th block, the block sums the partials.
// Expert products run the same kernels with one (token, pick) per block and the weight row offset
// by the pick's expert, so each is the plain product's arithmetic for that expert's rows.
#include <cassert>
#include <cuda_fp16.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/reduce.cuh"

namespace hearth::kernels::cuda {
namespace {

constexpr int k_tokens = 8;

struct q8_act {   // one block of activations in q8_0
    float d;
    int8_t q[32];
};
static_assert(sizeof(q8_act) == 36);

__device__ float half_bits(uint16_t h) { return __half2float(__ushort_as_half(h)); }

__device__ float round_f16(float x) { return __half2float(__float2half_rn(x)); }

__device__ uint16_t load_u16(const uint8_t * p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

// Block c of a quantized row as 32 integers and its scale (q8_0: d, int8[32]; q4_0: d, 16 bytes of
// two nibbles, the low ones the first 16 values, minus 8).
template <tensor_type T>
__device__ float load_block_q(const uint8_t * row, int64_t c, int (&q)[32]) {
    if constexpr (T == tensor_type::q8_0) {
        const uint8_t * b = row + c * 34;
        for (int j = 0; j < 32; ++j) q[j] = static_cast<int8_t>(b[2 + j]);
        return half_bits(load_u16(b));
    } else {
        const uint8_t * b = row + c * 18;
        for (int j = 0; j < 16; ++j) {
            q[j] = (b[2 + j] & 0x0f) - 8;
            q[j + 16] = (b[2 + j] >> 4) - 8;
        }
        return half_bits(load_u16(b));
    }
}

// Which rows a block multiplies. A plain product: weight row blockIdx.x times the k_tokens
// activation rows from blockIdx.y * k_tokens (fewer at the end), into y[t][blockIdx.x] of rows
// of n_rows. An expert product (ids set): pair p = pair_first + blockIdx.y, (token p / n_used,
// pick p % n_used), weight row ids[p] * expert_rows + blockIdx.x times activation row p (x per
// pick) or p / n_used, into y[p][blockIdx.x] of rows of expert_rows.
struct product_rows {
    const int32_t * ids;   // [n_pairs] experts; null: a plain product
    int64_t n_tokens;      // plain: activation rows
    int64_t n_rows;        // plain: the weight's rows, the length of a row of y
    int64_t expert_rows;   // experts: the rows of one expert, the length of a row of y
    int64_t n_used;        // experts: picks per token
    int64_t pair_first;    // experts: the pair of blockIdx.y == 0 (grids of more pairs than grid.y holds)
    bool x_per_pick;       // experts: x has a row per pair, not per token
};

struct block_rows {
    int64_t w_row;    // the weight row
    int64_t x_first;  // the first activation row
    int64_t y_first;  // the first output row
    int64_t y_stride; // floats per output row
    int nt;           // activation rows (1 for experts)
};

__device__ block_rows rows_of_block(const product_rows & pr) {
    const int64_t r = blockIdx.x;
    if (!pr.ids) {
        const int64_t t0 = static_cast<int64_t>(blockIdx.y) * k_tokens;
        const int nt = static_cast<int>(pr.n_tokens - t0 < k_tokens ? pr.n_tokens - t0 : k_tokens);
        return {r, t0, t0, pr.n_rows, nt};
    }
    const int64_t p = pr.pair_first + blockIdx.y;
    const int64_t e = pr.ids[p];
    return {e * pr.expert_rows + r, pr.x_per_pick ? p : p / pr.n_used, p, pr.expert_rows, 1};
}

template <tensor_type T>
__global__ void matmul_q_kernel(const uint8_t * w, size_t row_bytes, const q8_act * xq, float * y, int64_t n_cols,
                                product_rows pr) {
    const block_rows b = rows_of_block(pr);
    const int nt = b.nt;
    const int64_t n_blocks = n_cols / 32;
    float acc[k_tokens] = {};
    for (int64_t c = threadIdx.x; c < n_blocks; c += k_block) {
        int q[32];
        const float wd = load_block_q<T>(w + b.w_row * row_bytes, c, q);
        for (int t = 0; t < nt; ++t) {
            const q8_act & a = xq[(b.x_first + t) * n_blocks + c];
            int sumi = 0;
            for (int j = 0; j < 32; ++j) sumi += q[j] * a.q[j];
            acc[t] += static_cast<float>(sumi) * (wd * a.d);   // the CPU's sumi * (d_w * d_x)
        }
    }
    for (int t = 0; t < nt; ++t) {
        const float s = block_sum(acc[t]);
        if (threadIdx.x == 0) y[(b.y_first + t) * b.y_stride + blockIdx.x] = s;
    }
}

// f16 weights: the activations rounded to f16, each product exact in f32, the sum in double (the
// CPU's exact sum); f32 weights: f32 products and sums.
template <tensor_type T>
__global__ void matmul_plain_kernel(const uint8_t * w, size_t row_bytes, const float * x, float * y, int64_t n_cols,
                                    product_rows pr) {
    const block_rows b = rows_of_block(pr);
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

}  // namespace

bool supports_weight(tensor_type t) {
    return t == tensor_type::q8_0 || t == tensor_type::q4_0 || t == tensor_type::f16 || t == tensor_type::f32;
}

bool takes_q8_0_activations(tensor_type t) { return t == tensor_type::q8_0 || t == tensor_type::q4_0; }

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

// Launches the kernel for w's type over grid with the rows pr names; x_q8 for the types that
// take q8_0 activations (checked by the callers).
void launch_product(const weight_buffer & w, const buffer & x, const buffer * x_q8, const buffer & y, dim3 grid,
                    const product_rows & pr) {
    const cudaStream_t s = as_stream(x.dev().stream());
    const auto * wp = static_cast<const uint8_t *>(w.data->data());
    auto * yp = static_cast<float *>(y.data());
    if (takes_q8_0_activations(w.type)) {
        const auto * xq = static_cast<const q8_act *>(x_q8->data());
        if (w.type == tensor_type::q8_0)
            matmul_q_kernel<tensor_type::q8_0><<<grid, k_block, 0, s>>>(wp, w.row_bytes, xq, yp, w.n_cols, pr);
        else
            matmul_q_kernel<tensor_type::q4_0><<<grid, k_block, 0, s>>>(wp, w.row_bytes, xq, yp, w.n_cols, pr);
        return;
    }
    const auto * xp = static_cast<const float *>(x.data());
    if (w.type == tensor_type::f16)
        matmul_plain_kernel<tensor_type::f16><<<grid, k_block, 0, s>>>(wp, w.row_bytes, xp, yp, w.n_cols, pr);
    else
        matmul_plain_kernel<tensor_type::f32><<<grid, k_block, 0, s>>>(wp, w.row_bytes, xp, yp, w.n_cols, pr);
}

// CUDA's limit on grid.y: expert products launch at most this many pairs at a time.
constexpr int64_t k_max_grid_y = 65535;

}  // namespace

void matmul(const weight_buffer & w, const buffer & x, const buffer & y, int64_t n_tokens, const buffer * x_q8) {
    assert(supports_weight(w.type) && n_tokens > 0);
    assert(w.data->size() >= static_cast<size_t>(w.n_rows) * w.row_bytes);
    assert(x.size() >= static_cast<size_t>(n_tokens * w.n_cols) * sizeof(float));
    assert(y.size() >= static_cast<size_t>(n_tokens * w.n_rows) * sizeof(float));
    assert(!takes_q8_0_activations(w.type) ||
           (x_q8 && w.n_cols % 32 == 0 && x_q8->size() >= q8_0_activation_bytes(n_tokens, w.n_cols)));
    const dim3 grid(static_cast<unsigned>(w.n_rows), static_cast<unsigned>((n_tokens + k_tokens - 1) / k_tokens));
    launch_product(w, x, x_q8, y, grid, product_rows{nullptr, n_tokens, w.n_rows, 0, 0, 0, false});
}

void matmul_experts(const weight_buffer & w, int64_t expert_rows, const buffer & x, bool x_per_pick, const buffer & ids,
                    const buffer & y, int64_t n_tokens, int64_t n_used, const buffer * x_q8) {
    assert(supports_weight(w.type) && n_tokens > 0 && n_used > 0);
    assert(expert_rows > 0 && w.n_rows % expert_rows == 0);
    assert(w.data->size() >= static_cast<size_t>(w.n_rows) * w.row_bytes);
    const int64_t n_pairs = n_tokens * n_used;
    [[maybe_unused]] const int64_t x_rows = x_per_pick ? n_pairs : n_tokens;   // read by the asserts
    assert(x.size() >= static_cast<size_t>(x_rows * w.n_cols) * sizeof(float));
    assert(ids.size() >= static_cast<size_t>(n_pairs) * sizeof(int32_t));
    assert(y.size() >= static_cast<size_t>(n_pairs * expert_rows) * sizeof(float));
    assert(!takes_q8_0_activations(w.type) ||
           (x_q8 && w.n_cols % 32 == 0 && x_q8->size() >= q8_0_activation_bytes(x_rows, w.n_cols)));
    const auto * id = static_cast<const int32_t *>(ids.data());
    for (int64_t p0 = 0; p0 < n_pairs; p0 += k_max_grid_y) {
        const int64_t n = n_pairs - p0 < k_max_grid_y ? n_pairs - p0 : k_max_grid_y;
        const dim3 grid(static_cast<unsigned>(expert_rows), static_cast<unsigned>(n));
        launch_product(w, x, x_q8, y, grid, product_rows{id, 0, 0, expert_rows, n_used, p0, x_per_pick});
    }
}

}  // namespace hearth::kernels::cuda
