#include "kernels/matmul.h"

#include <algorithm>
#include <cassert>
#include <vector>

#include "kernels/quant.h"

namespace hearth::kernels {
namespace {

// Matvec: weight bytes per task. The q4_0 / q5_0 / q8_0 matvec streams a task's rows as two to
// four sequential parts (quant_unsigned.h), which the prefetchers need to be long (decode tg128,
// 2 threads, two parts, alternating runs: 32 KiB 67-68 t/s, 128 KiB 79-90, 256 KiB 80-90; one
// stream per task had 72-80 at 32 KiB). Each thread streams its own contiguous share of the bytes (equal shares)
// first, then helps the others from the ends of their shares (parallel_for_shares), so task
// boundaries do not break a memory stream. The last tasks of a share halve down to
// k_matvec_last_task_bytes: a thread that finishes early helps with small pieces, and the
// shares end within about a microsecond of each other, where a whole last task (~12 µs) left
// one thread waiting at the end of most matvecs.
constexpr int64_t k_matvec_task_bytes = 256 * 1024;
constexpr int64_t k_matvec_last_task_bytes = 16 * 1024;
// Batched: a tile is a block of weight rows (kept in L1/L2 while every token of the tile passes
// over it) times a block of activation rows (kept in L2 while the weight rows change). What a
// kernel works out once per task for its tokens is shared by more rows with larger row blocks
// (q5_0 through matmul, one thread: 16 KiB 139-141 GFLOP/s, 32 KiB 141-143, 64 KiB 147).
constexpr size_t k_tile_weight_bytes = 64 * 1024;
constexpr size_t k_tile_act_bytes = 256 * 1024;
// Conversions of fewer elements than this run on the calling thread alone.
constexpr int64_t k_parallel_convert_elems = 64 * 1024;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t m) { return ceil_div(a, m) * m; }

}  // namespace

matmul_context::matmul_context() = default;
matmul_context::~matmul_context() = default;

void matmul_context::set_activations(const float * x, int64_t n_tokens, int64_t n_cols) {
    assert(n_tokens >= 0 && n_cols > 0);
    x_ = x;
    n_tokens_ = n_tokens;
    n_cols_ = n_cols;
    for (auto & b : buffers_) b.valid = false;
}

matmul_context::converted_rows matmul_context::converted(tensor_type type, thread_pool & pool) {
    if (type == tensor_type::f32)
        return {reinterpret_cast<const std::byte *>(x_), static_cast<size_t>(n_cols_) * sizeof(float)};
    for (auto & b : buffers_)
        if (b.valid && b.type == type) return {b.data, b.row_bytes};

    // A buffer that holds nothing current, else the oldest one.
    buffer * slot = nullptr;
    for (auto & b : buffers_)
        if (!b.valid) { slot = &b; break; }
    if (!slot) {
        slot = &buffers_[static_cast<size_t>(next_evict_)];
        next_evict_ = (next_evict_ + 1) % k_n_buffers;
    }

    const size_t row_bytes = row_size(type, n_cols_);
    const size_t need = row_bytes * static_cast<size_t>(n_tokens_);
    if (need > slot->capacity) {
        const size_t cap = std::max(need, slot->capacity * 2);
        slot->storage.reset(new std::byte[cap + 63]);
        const auto addr = reinterpret_cast<uintptr_t>(slot->storage.get());
        slot->data = slot->storage.get() + ((64 - addr % 64) % 64);
        slot->capacity = cap;
    }
    slot->type = type;
    slot->row_bytes = row_bytes;

    std::byte * const dst = slot->data;
    const float * const x = x_;
    const int64_t n_cols = n_cols_;
    auto convert_row = [&](int64_t t, int) {
        quantize_row(type, x + t * n_cols, dst + static_cast<size_t>(t) * row_bytes, n_cols);
    };
    if (n_tokens_ > 1 && n_tokens_ * n_cols_ >= k_parallel_convert_elems) {
        pool.parallel_for(n_tokens_, convert_row);
    } else {
        for (int64_t t = 0; t < n_tokens_; ++t) convert_row(t, 0);
    }
    slot->valid = true;
    return {slot->data, row_bytes};
}

namespace {

// How one matmul is cut into tasks, and the data a task needs.
struct matmul_plan {
    const std::byte * w_data;
    size_t w_stride;
    tensor_type wt;
    int64_t n_rows, n_cols, n_tokens;
    matmul_context::converted_rows act;
    float * y;
    int64_t rows_per_block, tokens_per_block, n_row_blocks, n_token_blocks;
    bool per_token;   // step order over a tile summed in batch order: one matvec per token
    int64_t n_tasks() const { return n_row_blocks * n_token_blocks; }
};

matmul_plan make_plan(const weight_view & w, matmul_context & ctx, float * y, thread_pool & pool) {
    assert(ctx.n_cols() == w.n_cols);
    assert(w.row_bytes >= row_size(w.type, w.n_cols));
    matmul_plan p{static_cast<const std::byte *>(w.data), w.row_bytes, w.type, w.n_rows, w.n_cols, ctx.n_tokens(), {}, y,
                  1, 1, 0, 0, false};
    if (p.n_rows == 0) return p;   // (matmul_group returns before planning when there are no tokens)
    p.act = ctx.converted(vec_dot_type(w.type), pool);
    if (p.n_tokens == 1) return p;   // a matvec: cut_matvec cuts it
    p.per_token = ctx.step_order() && vec_dot_tile_in_batch_order(w.type);
    // Rows per block come in multiples of 16 (the q4_K row groups take sixteen at once, other
    // multi-row kernels four).
    p.rows_per_block = round_up(std::max<int64_t>(1, static_cast<int64_t>(k_tile_weight_bytes / p.w_stride)), 16);
    p.tokens_per_block = std::clamp<int64_t>(static_cast<int64_t>(k_tile_act_bytes / p.act.row_bytes), 1, p.n_tokens);
    // A tile that repacks its rows per call repacks them once per task: one task per row block
    // takes every token (the default model's ffn_down had 11 token blocks, each repacking its
    // sixteen rows again: a quarter of q6_K's prefill time).
    if (vec_dot_tile_repacks_rows(w.type) && !p.per_token) p.tokens_per_block = p.n_tokens;
    // Keep every thread fed when the matrix is short: split the tokens finer instead.
    const int64_t n_row_blocks = ceil_div(p.n_rows, p.rows_per_block);
    const int64_t want_tasks = 4 * static_cast<int64_t>(pool.n_threads());
    if (n_row_blocks * ceil_div(p.n_tokens, p.tokens_per_block) < want_tasks)
        p.tokens_per_block = std::max<int64_t>(1, ceil_div(p.n_tokens, ceil_div(want_tasks, n_row_blocks)));
    p.n_row_blocks = ceil_div(p.n_rows, p.rows_per_block);
    p.n_token_blocks = ceil_div(p.n_tokens, p.tokens_per_block);
    return p;
}

// A batched task, row-block-major: consecutive tasks share weight rows (in the shared cache).
void run_tile_task(const matmul_plan & p, int64_t task) {
    const int64_t r0 = (task / p.n_token_blocks) * p.rows_per_block;
    const int64_t t0 = (task % p.n_token_blocks) * p.tokens_per_block;
    const int64_t nr = std::min(p.rows_per_block, p.n_rows - r0);
    const int64_t t1 = std::min(t0 + p.tokens_per_block, p.n_tokens);
    if (p.per_token) {   // the row block stays in cache while each token passes over it
        for (int64_t t = t0; t < t1; ++t)
            vec_dot_rows(p.wt, p.n_cols, p.w_data + static_cast<size_t>(r0) * p.w_stride, p.w_stride,
                         p.act.data + static_cast<size_t>(t) * p.act.row_bytes, p.y + t * p.n_rows + r0, nr);
        return;
    }
    vec_dot_tile(p.wt, p.n_cols, p.w_data + static_cast<size_t>(r0) * p.w_stride, p.w_stride, nr,
                 p.act.data + static_cast<size_t>(t0) * p.act.row_bytes, p.act.row_bytes, t1 - t0, p.y + t0 * p.n_rows + r0,
                 p.n_rows);
}

// The tasks of a group of matvecs: task k is rows [r0, r0 + n_rows) of weight `plan`, and
// thread s's share is tasks [bounds[s], bounds[s + 1]). `cuts` is scratch.
struct matvec_cut {
    struct task {
        size_t plan;
        int64_t r0, n_rows;
    };
    struct cut {
        int64_t pos;   // a byte offset into the group's weights
        int share;     // >= 0: where that share begins
    };
    std::vector<task> tasks;
    std::vector<int64_t> bounds;
    std::vector<cut> cuts;
};

// Equal byte shares, one per thread, each cut into tasks of k_matvec_task_bytes that halve down
// to k_matvec_last_task_bytes at the share's end, every cut on a multiple of 4 rows (what
// multi-row kernels take at once). Weights follow each other in the group's byte order.
void cut_matvec(std::span<const matmul_plan> plans, int n_threads, matvec_cut & out) {
    int64_t total = 0;
    for (const auto & p : plans) total += p.n_rows * static_cast<int64_t>(p.w_stride);
    out.cuts.clear();
    for (int s = 0; s < n_threads; ++s) {
        const int64_t begin = total * s / n_threads, end = total * (s + 1) / n_threads;
        out.cuts.push_back({begin, s});
        const size_t first_inner = out.cuts.size();
        int64_t pos = end, size = k_matvec_last_task_bytes;   // from the end back
        while (pos - size > begin) {
            pos -= size;
            out.cuts.push_back({pos, -1});
            size = std::min(2 * size, k_matvec_task_bytes);
        }
        std::reverse(out.cuts.begin() + static_cast<std::ptrdiff_t>(first_inner), out.cuts.end());
    }
    out.tasks.clear();
    out.bounds.assign(static_cast<size_t>(n_threads) + 1, 0);
    size_t c = 0;
    int64_t start = 0;   // the byte offset of plan i
    for (size_t i = 0; i < plans.size(); ++i) {
        const auto stride = static_cast<int64_t>(plans[i].w_stride);
        const int64_t end = start + plans[i].n_rows * stride;
        int64_t row = 0;
        for (; c < out.cuts.size() && out.cuts[c].pos < end; ++c) {
            const int64_t r = (out.cuts[c].pos - start) / stride / 4 * 4;
            if (r > row) {
                out.tasks.push_back({i, row, r - row});
                row = r;
            }
            if (out.cuts[c].share >= 0) out.bounds[static_cast<size_t>(out.cuts[c].share)] = static_cast<int64_t>(out.tasks.size());
        }
        if (row < plans[i].n_rows) out.tasks.push_back({i, row, plans[i].n_rows - row});
        start = end;
    }
    out.bounds.back() = static_cast<int64_t>(out.tasks.size());
}

void run_matvecs(std::span<const matmul_plan> plans, thread_pool & pool) {
    // The owner's, grown to the largest group, then allocating nothing. The tasks read it through
    // a reference: a thread_local named in the task would be each worker's own (empty) one.
    thread_local matvec_cut owner_cut;
    matvec_cut & cut = owner_cut;
    cut_matvec(plans, pool.n_threads(), cut);
    pool.parallel_for_shares([&](int s) { return cut.bounds[static_cast<size_t>(s)]; }, [&](int64_t k, int) {
        const matvec_cut::task & t = cut.tasks[static_cast<size_t>(k)];
        const matmul_plan & p = plans[t.plan];
        vec_dot_rows(p.wt, p.n_cols, p.w_data + static_cast<size_t>(t.r0) * p.w_stride, p.w_stride, p.act.data, p.y + t.r0,
                     t.n_rows);
    });
}

}  // namespace

void matmul(const weight_view & w, matmul_context & ctx, float * y, thread_pool & pool) {
    matmul_group(std::span<const weight_view>(&w, 1), ctx, std::span<float * const>(&y, 1), pool);
}

void matmul_group(std::span<const weight_view> ws, matmul_context & ctx, std::span<float * const> ys, thread_pool & pool) {
    assert(ws.size() == ys.size() && ws.size() <= k_max_group);
    if (ctx.n_tokens() == 0) return;
    std::array<matmul_plan, k_max_group> plans;
    for (size_t i = 0; i < ws.size(); ++i) plans[i] = make_plan(ws[i], ctx, ys[i], pool);
    // One context, so every plan has the same token count.
    if (ctx.n_tokens() == 1) {
        run_matvecs(std::span<const matmul_plan>(plans.data(), ws.size()), pool);
        return;
    }
    std::array<int64_t, k_max_group + 1> first{};   // first[i]: the first task of weight i
    for (size_t i = 0; i < ws.size(); ++i) first[i + 1] = first[i] + plans[i].n_tasks();
    const int64_t n_tasks = first[ws.size()];
    pool.parallel_for(n_tasks, [&](int64_t t, int) {
        size_t i = 0;
        while (t >= first[i + 1]) ++i;
        run_tile_task(plans[i], t - first[i]);
    });
}

void matmul(const weight_view & w, const float * x, int64_t n_tokens, float * y, thread_pool & pool,
            matmul_context & ctx) {
    ctx.set_activations(x, n_tokens, w.n_cols);
    matmul(w, ctx, y, pool);
}

}  // namespace hearth::kernels
