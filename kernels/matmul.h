// Matrix products of a weight matrix in any supported tensor_type with f32 activations:
//   y[t][r] = vec_dot(w row r, x[t])   for t < n_tokens, r < w.n_rows.
// The activations are converted once per type to the weight's vec_dot_type (q8_0, q8_K, f16, ...)
// and the converted rows are kept in a matmul_context, so several weights that read the same
// input (Q/K/V, gate/up) share one conversion. For one token (a matvec, memory-bound) each thread
// streams an equal share of the weight bytes and then helps the others from the ends of their
// shares; with several tokens each task is a (row block x token block) tile handed out
// dynamically, so a block of weight rows is reused from cache for many tokens (prefill).
// Invariants: every y element is one vec_dot over the whole row, so the result is bitwise the same
// for any thread count and any tiling, and equal to a one-token matvec of the same row and token
// (but where a type's tiles sum in llama.cpp's batch order, quant.h; in step order, set on the
// context, those tiles too are summed as matvecs, one token at a time over the cached rows).
// Thread-safety: a matmul_context belongs to one caller (the compute worker); matmul() uses the
// pool (one owner) and must not be called concurrently with the same context or pool.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "kernels/tensor_type.h"
#include "kernels/thread_pool.h"

namespace hearth::kernels {

// A weight matrix as stored: n_rows rows (output features) of n_cols elements (input features),
// each row row_bytes apart (>= row_size(type, n_cols)).
struct weight_view {
    tensor_type type;
    const void * data;
    int64_t n_rows;
    int64_t n_cols;
    size_t row_bytes;
};

// The activations of one matmul input and their conversions, made on first use and reused by
// every matmul until the next set_activations(). Buffers grow to the largest size seen and are
// never shrunk, so steady-state use allocates nothing.
class matmul_context {
public:
    matmul_context();
    ~matmul_context();
    matmul_context(const matmul_context &) = delete;
    matmul_context & operator=(const matmul_context &) = delete;

    // x: [n_tokens][n_cols] f32. Not copied: it must stay valid and unchanged until the next
    // set_activations() (the f32 path reads it directly).
    void set_activations(const float * x, int64_t n_tokens, int64_t n_cols);

    int64_t n_tokens() const { return n_tokens_; }
    int64_t n_cols() const { return n_cols_; }

    // Step order: every token's products carry the bits of a one-token matvec, whatever the
    // batch (verifying speculated tokens as decode steps would compute them). Kept until changed.
    void set_step_order(bool on) { step_order_ = on; }
    bool step_order() const { return step_order_; }

    // The activation rows converted to `type` (row t at data + t * row_bytes), converting them now
    // (on the pool) if this type was not asked for since set_activations().
    struct converted_rows {
        const std::byte * data;
        size_t row_bytes;
    };
    converted_rows converted(tensor_type type, thread_pool & pool);

private:
    struct buffer {
        tensor_type type = tensor_type::f32;
        bool valid = false;
        size_t capacity = 0;
        size_t row_bytes = 0;
        std::unique_ptr<std::byte[]> storage;   // over-allocated for 64-byte alignment
        std::byte * data = nullptr;
    };
    static constexpr int k_n_buffers = 4;   // distinct vec_dot types in use at once (q8_0, q8_K, f16, ...)

    const float * x_ = nullptr;
    bool step_order_ = false;
    int64_t n_tokens_ = 0;
    int64_t n_cols_ = 0;
    std::array<buffer, k_n_buffers> buffers_;
    int next_evict_ = 0;
};

// y[t][r] for the activations set in ctx (ctx.n_cols() == w.n_cols). y: [ctx.n_tokens()][w.n_rows].
void matmul(const weight_view & w, matmul_context & ctx, float * y, thread_pool & pool);

// Several weights over the same activations (Q, K and V; gate and up) as one pool dispatch:
// ys[i] gets matmul(ws[i], ctx, ...), bitwise, with one wake-up of the threads instead of one
// per weight (a decoded token does ~190 dispatches; each costs a wake-up and a barrier).
inline constexpr size_t k_max_group = 4;
void matmul_group(std::span<const weight_view> ws, matmul_context & ctx, std::span<float * const> ys, thread_pool & pool);

// Shorthand: ctx.set_activations(x, n_tokens, w.n_cols) then matmul(w, ctx, y, pool).
void matmul(const weight_view & w, const float * x, int64_t n_tokens, float * y, thread_pool & pool,
            matmul_context & ctx);

}  // namespace hearth::kernels
