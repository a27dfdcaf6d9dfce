// Scaled dot-product attention of a batch of query tokens over one sequence's KV cache:
//   out[t][h] = sum_p softmax_p(scale * q[t][h] . K[p][g]) * V[p][g],  kv_start[t] <= p < n_kv[t],
// with GQA (query head h reads KV head g = h / (n_head / n_head_kv)). K and V may each be f32, f16,
// q8_0 or q4_0 (any type whose block size divides head_dim), chosen separately.
// An f16 K with head_dim a multiple of 64 is computed as llama.cpp computes it without flash
// attention, operation for operation, so with an f16 V too the output is its bit for bit
// (attention.cpp; another V type is dequantized to f32 where ggml would read f16): the
// queries and the softmax weights rounded to f16 as ggml converts them, its sums in its order
// and its exp. As in llama.cpp, a batch of one token sums in another order than a batch of two
// or more (float rounding apart): decode steps are llama.cpp's decode steps, and prefill never
// evaluates a lone token of a longer prompt (sequence.h), so that it stays batch-invariant.
// Every other K type is softmaxed online, a chunk of positions at a time (running max and sum),
// so no score matrix is stored; queries stay f32 and K/V slices are dequantized to f32 once per
// chunk for every query head of the group and every token of a block, all in f32.
// Invariants: the result does not depend on the thread count (tasks never split a sum
// differently), nor on the other tokens of the batch (but for the one-token f16 case above):
// on the online path every token's positions are softmaxed in the same fixed segments merged in
// the same order, so prefix reuse is bitwise.
// Thread-safety: uses the pool (one owner at a time); per-thread scratch is thread_local and
// grows to the largest size seen, so steady-state calls allocate nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/tensor_type.h"
#include "kernels/thread_pool.h"

namespace hearth::kernels {

// One layer's K or V cache of one sequence: position p is the row at data + p * row_bytes, laid
// out [n_head_kv][head_dim] in `type`.
struct kv_rows {
    tensor_type type;
    const void * data;
    size_t row_bytes;
};

struct kv_view {
    kv_rows k, v;
};

// q, out: [n_tokens][n_head * head_dim] f32. n_kv: [n_tokens], the cache positions [0, n_kv[t])
// that token t attends to (causal masking is the caller's choice of n_kv); n_kv[t] == 0 gives 0.
// kv_start: [n_tokens] or nullptr (0): the first position token t attends to, for a sliding
// window; the positions before it count as llama.cpp's masked ones (they add zeros), so a
// window changes no other rounding.
// step_order: every token is summed as a batch of one would sum it (the f16 one-token order), so
// a batch gives each token the bits of a decode step (verifying speculated tokens).
// Preconditions: n_head % n_head_kv == 0; head_dim % block_size(type) == 0 for K's and V's type (so
// for q8_0 and q4_0 a multiple of 32, each head's slice whole blocks).
void attention(const float * q, int64_t n_tokens, const int32_t * n_kv, const kv_view & kv, int64_t n_head,
               int64_t n_head_kv, int64_t head_dim, float scale, float * out, thread_pool & pool,
               const int32_t * kv_start = nullptr, bool step_order = false);

}  // namespace hearth::kernels
