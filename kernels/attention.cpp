#include "kernels/attention.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

#include "kernels/cpu/dispatch.h"
#include "kernels/ops_simd.h"
#include "kernels/quant.h"

namespace hearth::kernels {
namespace {

// Positions per chunk: the K and V slices of a chunk (2 * 64 * head_dim floats) stay in L1/L2
// while every query of the task passes over them.
constexpr int64_t k_chunk = 64;
// Query tokens per task: they share each dequantized chunk.
constexpr int64_t k_tokens_per_task = 16;
// The KV range of every token is softmaxed in fixed segments of positions [256 k, 256 (k+1)),
// each with its own running state, merged in order. The segments are the same whatever the
// batch, so a token's output does not depend on which other tokens were evaluated with it
// (a prompt split into other batches, as prefix reuse does, gives bitwise the same logits).
constexpr int64_t k_segment = 256;
// Below this many tasks the segments are computed by separate tasks and merged afterwards, so
// a decode step with few KV heads still keeps every thread busy; otherwise one task walks its
// tokens' segments in turn. Either way the same merges in the same order: same results, on
// any pool.
constexpr int64_t k_min_tasks = 16;
// Positions per chunk of an f16 cache (attend_task_f16): K or V of a chunk converted to f32
// (256 x head_dim floats, 128 KiB at head_dim 128) stays in L2 while every query head of the
// group and every token of the task passes over it. The whole visible range converted at once
// (4 MiB at 4096 positions) was streamed back from L3 by each query head.
constexpr int64_t k_chunk_f16 = 256;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Running state of one (token, query head): max score m, sum of exp l, unnormalised output acc.
struct online_state {
    float * m;
    float * l;
    float * acc;   // [head_dim]
};

struct task_shape {
    int64_t n_tokens, n_head, n_head_kv, head_dim, group;
    int64_t n_token_blocks, n_segments;   // n_segments > 1: one task per segment (merged after)
    float scale;
    const int32_t * kv_start;             // [n_tokens] first visible position, or nullptr (0)
    bool step_order;                      // f16: every token in the one-token order
};

// Per-thread buffers, grown as needed and kept for the thread's life.
// attend_task_f16 uses them as: k, v [k_chunk_f16][head_dim]; scores [rows][positions]; state
// [rows][head_dim] (the queries in f16); lanes [rows][n_lanes][head_dim].
struct thread_scratch {
    std::vector<float> k, v;        // [k_chunk][head_dim] dequantized slices
    std::vector<float> scores;      // [k_chunk]
    std::vector<float> state;       // [k_tokens_per_task * group][head_dim + 2]
    std::vector<float> segment;     // the same, for one segment (merged into state)
    std::vector<uint16_t> half;     // f16 rows (attend_task_f16)
    std::vector<float> lanes;       // (attend_task_f16)
};

thread_scratch & local_scratch() {
    thread_local thread_scratch s;
    return s;
}

// Where the slice of KV head g (head_offset bytes into a row) at position p starts.
inline const std::byte * slice(const kv_rows & rows, size_t head_offset, int64_t p) {
    return static_cast<const std::byte *>(rows.data) + static_cast<size_t>(p) * rows.row_bytes + head_offset;
}

// One task: KV head g, tokens [t0, t1), cache positions [p0, p1) (clipped per token to n_kv).
// Leaves each (token, head)'s running state in `st` rows of head_dim + 2 floats: m, l, acc.
void attend_task(const float * q, const int32_t * n_kv, const kv_view & kv, const task_shape & s, int64_t g,
                 int64_t t0, int64_t t1, int64_t p0, int64_t p1, float * st) {
    const int32_t * kv_start = s.kv_start;
    thread_scratch & sc = local_scratch();
    const simd::f32_kernels & vk = simd::active_f32_kernels();
    // Looked up once: two calls per position and head slice make the dispatch cost visible.
    const cpu::quant_kernels & qk = cpu::active_quant_kernels();
    const cpu::dequantize_row_fn deq_k = qk[kv.k.type].dequantize_row, deq_v = qk[kv.v.type].dequantize_row;
    const int64_t D = s.head_dim;
    const size_t k_offset = row_size(kv.k.type, g * D), v_offset = row_size(kv.v.type, g * D);
    // f32 slices are read in place (both halves, so that they share one stride).
    const bool direct = kv.k.type == tensor_type::f32 && kv.v.type == tensor_type::f32 && kv.k.row_bytes == kv.v.row_bytes;
    if (!direct) {
        sc.k.resize(static_cast<size_t>(k_chunk * D));
        sc.v.resize(static_cast<size_t>(k_chunk * D));
    }
    sc.scores.resize(k_chunk);

    const int64_t n_rows = (t1 - t0) * s.group;
    for (int64_t r = 0; r < n_rows; ++r) {
        float * row = st + r * (D + 2);
        row[0] = -INFINITY;
        row[1] = 0.0f;
        std::fill(row + 2, row + 2 + D, 0.0f);
    }
    int64_t p_end = p0;
    for (int64_t t = t0; t < t1; ++t) p_end = std::max<int64_t>(p_end, std::min<int64_t>(n_kv[t], p1));

    for (int64_t c0 = p0; c0 < p_end; c0 += k_chunk) {
        const int64_t nc = std::min(k_chunk, p_end - c0);
        const float * kc;
        const float * vc;
        int64_t stride;   // floats between positions in kc / vc
        if (direct) {
            kc = reinterpret_cast<const float *>(slice(kv.k, k_offset, c0));
            vc = reinterpret_cast<const float *>(slice(kv.v, v_offset, c0));
            stride = static_cast<int64_t>(kv.k.row_bytes / sizeof(float));
        } else {
            for (int64_t i = 0; i < nc; ++i) {
                deq_k(slice(kv.k, k_offset, c0 + i), sc.k.data() + i * D, D);
                deq_v(slice(kv.v, v_offset, c0 + i), sc.v.data() + i * D, D);
            }
            kc = sc.k.data();
            vc = sc.v.data();
            stride = D;
        }
        for (int64_t t = t0; t < t1; ++t) {
            // This token's positions in the chunk: [lo, hi), clipped to its window.
            const int64_t lo = kv_start ? std::max<int64_t>(c0, kv_start[t]) : c0;
            const int64_t n_here = std::min<int64_t>(c0 + nc, n_kv[t]) - lo;
            if (n_here <= 0) continue;
            const float * kt = kc + (lo - c0) * stride;
            const float * vt = vc + (lo - c0) * stride;
            for (int64_t j = 0; j < s.group; ++j) {
                const int64_t h = g * s.group + j;
                const float * qh = q + (t * s.n_head + h) * D;
                float * row = st + ((t - t0) * s.group + j) * (D + 2);
                float * scores = sc.scores.data();
                vk.dot_rows(qh, kt, stride, n_here, D, s.scale, scores);
                // std::max, not std::fmax: the same maximum here (scores are never NaN), and
                // fmax's NaN rules made it a libm call per score (1.4 % of a 512-token prefill).
                float m_chunk = -INFINITY;
                for (int64_t i = 0; i < n_here; ++i) m_chunk = std::max(m_chunk, scores[i]);
                const float m_old = row[0];
                const float m_new = std::fmax(m_old, m_chunk);
                // exp(-inf) = 0 drops the empty initial state.
                const float correction = std::exp(m_old - m_new);
                float * acc = row + 2;
                if (correction != 1.0f) vk.scale(acc, correction, D);
                const float l = row[1] * correction + vk.exp_shifted(scores, m_new, scores, n_here);
                vk.weighted_sum(scores, vt, stride, n_here, D, acc);
                row[0] = m_new;
                row[1] = l;
            }
        }
    }
}

// total <- total merged with the state of the next segment (m, l, acc[d]); both rows of
// head_dim + 2 floats. An empty state (l == 0: no position) changes nothing.
void merge_state(float * total, const float * next, int64_t head_dim) {
    if (next[1] == 0.0f) return;
    if (total[1] == 0.0f) {
        std::copy(next, next + head_dim + 2, total);
        return;
    }
    const float m = std::fmax(total[0], next[0]);
    const float wt = std::exp(total[0] - m), wn = std::exp(next[0] - m);
    total[0] = m;
    total[1] = total[1] * wt + next[1] * wn;
    for (int64_t d = 0; d < head_dim; ++d) total[2 + d] = total[2 + d] * wt + next[2 + d] * wn;
}

// attend_task over [p0, p1), one k_segment at a time, merged in order into `st`.
void attend_segments(const float * q, const int32_t * n_kv, const kv_view & kv, const task_shape & s, int64_t g,
                     int64_t t0, int64_t t1, int64_t p0, int64_t p1, float * st, std::vector<float> & seg) {
    const int64_t row = s.head_dim + 2, n_rows = (t1 - t0) * s.group;
    seg.resize(static_cast<size_t>(n_rows * row));
    for (int64_t r = 0; r < n_rows; ++r) {
        st[r * row] = -INFINITY;
        st[r * row + 1] = 0.0f;
        std::fill(st + r * row + 2, st + (r + 1) * row, 0.0f);
    }
    for (int64_t a = p0; a < p1; a += k_segment) {
        attend_task(q, n_kv, kv, s, g, t0, t1, a, std::min(a + k_segment, p1), seg.data());
        for (int64_t r = 0; r < n_rows; ++r) merge_state(st + r * row, seg.data() + r * row, s.head_dim);
    }
}

// llama.cpp's attention without flash attention over an f16 cache, operation for operation
// (ggml's mul_mat, soft_max, mul_mat), so that its output equals llama.cpp's bit for bit:
//   s[p]  = f16(q) . K[p]            partial sums in n_lanes lanes by fma, folded
//   w[p]  = s[p] * scale             then m = max w
//   e[p]  = exp_ggml(w[p] - m)       sum: 16-blocks folded in f32, added in double
//   P[p]  = f16(e[p] * f32(1 / sum))
//   o[d]  = sum_p P[p] V[p][d]       partial sums by position (p % n_lanes) by fma, folded
// ggml multiplies a batch of two or more tokens through tinyBLAS (16 lanes) and one token
// through ggml_vec_dot_f16 (64 lanes); see ops_simd.h. Products of two f16 values are exact in
// f32, so the fmas are plain sums; only their order and grouping matter, and they are ggml's.
// Positions are counted from 0 for the lanes and blocks, as ggml's views of the cache start
// there; llama.cpp's masked positions add zeros.
void attend_task_f16(const float * q, const int32_t * n_kv, const kv_view & kv, const task_shape & s, int64_t g,
                     int64_t t0, int64_t t1, float * out) {
    const int n_lanes = s.n_tokens >= 2 && !s.step_order ? 16 : 64;
    thread_scratch & sc = local_scratch();
    const simd::f32_kernels & vk = simd::active_f32_kernels();
    const cpu::quant_kernels & qk = cpu::active_quant_kernels();
    const cpu::dequantize_row_fn deq = qk[tensor_type::f16].dequantize_row;
    const cpu::dequantize_row_fn deq_v = qk[kv.v.type].dequantize_row;
    const cpu::quantize_row_fn quant = qk[tensor_type::f16].quantize_row;
    const int64_t D = s.head_dim;
    const size_t k_offset = row_size(tensor_type::f16, g * D), v_offset = row_size(kv.v.type, g * D);
    // Rows: (token, query head of the group), r = (t - t0) * group + j.
    const int64_t n_rows = (t1 - t0) * s.group;
    int64_t p_end = 0;
    for (int64_t t = t0; t < t1; ++t) p_end = std::max<int64_t>(p_end, n_kv[t]);
    sc.k.resize(static_cast<size_t>(k_chunk_f16 * D));
    sc.v.resize(static_cast<size_t>(k_chunk_f16 * D));
    sc.scores.resize(static_cast<size_t>(n_rows * p_end));
    sc.half.resize(static_cast<size_t>(std::max(p_end, D)));
    sc.lanes.resize(static_cast<size_t>(n_rows * n_lanes * D));
    sc.state.resize(static_cast<size_t>(n_rows * D));
    const auto row_n = [&](int64_t r) { return static_cast<int64_t>(n_kv[t0 + r / s.group]); };
    const auto row_head = [&](int64_t r) { return g * s.group + r % s.group; };
    const auto scores = [&](int64_t r) { return sc.scores.data() + r * p_end; };
    const auto lanes = [&](int64_t r) { return sc.lanes.data() + r * n_lanes * D; };
    const auto qh16 = [&](int64_t r) { return sc.state.data() + r * D; };   // the query rounded to f16, as ggml converts it
    for (int64_t r = 0; r < n_rows; ++r) {
        quant(q + ((t0 + r / s.group) * s.n_head + row_head(r)) * D, sc.half.data(), D);
        deq(sc.half.data(), qh16(r), D);
    }
    // Scores, a chunk of K at a time, converted once for every row: each score is its own
    // position's dot product, so the chunks change no bit.
    for (int64_t c0 = 0; c0 < p_end; c0 += k_chunk_f16) {
        const int64_t nc = std::min(k_chunk_f16, p_end - c0);
        vk.f16_rows_to_f32(slice(kv.k, k_offset, c0), kv.k.row_bytes, nc, D, sc.k.data());
        for (int64_t r = 0; r < n_rows; ++r) {
            const int64_t n_here = std::min(row_n(r), c0 + nc) - c0;
            if (n_here > 0) vk.dot_lanes_rows(qh16(r), sc.k.data(), D, n_here, D, n_lanes, scores(r) + c0);
        }
    }
    // The softmax of each row over all its positions, as before.
    for (int64_t r = 0; r < n_rows; ++r) {
        const int64_t n = row_n(r);
        if (n <= 0) continue;
        float * w = scores(r);
        // Positions before the window are llama.cpp's masked ones: -inf, whose exp adds 0.
        const int64_t start = s.kv_start ? std::min<int64_t>(s.kv_start[t0 + r / s.group], n) : 0;
        std::fill(w, w + start, -INFINITY);
        float m = -INFINITY;
        for (int64_t p = start; p < n; ++p) {
            w[p] *= s.scale;
            m = w[p] > m ? w[p] : m;
        }
        const double sum = vk.exp_sum16(w, m, w, n);
        vk.scale(w, static_cast<float>(1.0 / sum), n);
        quant(w, sc.half.data(), n);
        deq(sc.half.data(), w, n);
    }
    // The weighted sums of V, a chunk at a time: a lane takes its positions in order whatever
    // the chunks, as chunks start at multiples of n_lanes.
    static_assert(k_chunk_f16 % 64 == 0);
    std::fill(sc.lanes.begin(), sc.lanes.end(), 0.0f);
    for (int64_t c0 = 0; c0 < p_end; c0 += k_chunk_f16) {
        const int64_t nc = std::min(k_chunk_f16, p_end - c0);
        if (kv.v.type == tensor_type::f16) vk.f16_rows_to_f32(slice(kv.v, v_offset, c0), kv.v.row_bytes, nc, D, sc.v.data());
        else
            for (int64_t i = 0; i < nc; ++i) deq_v(slice(kv.v, v_offset, c0 + i), sc.v.data() + i * D, D);
        // The group's heads of a token see the same positions: one call for them all.
        for (int64_t r = 0; r < n_rows; r += s.group) {
            const int64_t n_here = std::min(row_n(r), c0 + nc) - c0;
            if (n_here > 0)
                vk.lane_axpy(scores(r) + c0, p_end, sc.v.data(), D, n_here, D, n_lanes, lanes(r), n_lanes * D, s.group);
        }
    }
    for (int64_t r = 0; r < n_rows; ++r) {
        float * o = out + ((t0 + r / s.group) * s.n_head + row_head(r)) * D;
        if (row_n(r) <= 0) std::fill(o, o + D, 0.0f);
        else simd::fold_lane_rows(lanes(r), n_lanes, D, o);
    }
}

}  // namespace

void attention(const float * q, int64_t n_tokens, const int32_t * n_kv, const kv_view & kv, int64_t n_head,
               int64_t n_head_kv, int64_t head_dim, float scale, float * out, thread_pool & pool,
               const int32_t * kv_start, bool step_order) {
    assert(n_head_kv > 0 && n_head % n_head_kv == 0);
    for (const kv_rows & rows : {kv.k, kv.v}) {
        assert(head_dim % tensor_type_info(rows.type).block_size == 0);
        assert(rows.row_bytes >= row_size(rows.type, n_head_kv * head_dim));
        assert(rows.type != tensor_type::f32 || rows.row_bytes % sizeof(float) == 0);
    }
    if (n_tokens <= 0) return;

    task_shape s{};
    s.n_tokens = n_tokens;
    s.n_head = n_head;
    s.n_head_kv = n_head_kv;
    s.head_dim = head_dim;
    s.group = n_head / n_head_kv;
    s.scale = scale;
    s.kv_start = kv_start;
    s.step_order = step_order;
    s.n_token_blocks = ceil_div(n_tokens, k_tokens_per_task);
    if (kv.k.type == tensor_type::f16 && head_dim % 64 == 0) {
        pool.parallel_for(n_head_kv * s.n_token_blocks, [&](int64_t task, int) {
            // Later token blocks see more positions (causal): hand them out first.
            const int64_t tb = s.n_token_blocks - 1 - task % s.n_token_blocks;
            const int64_t t0 = tb * k_tokens_per_task, t1 = std::min(t0 + k_tokens_per_task, n_tokens);
            attend_task_f16(q, n_kv, kv, s, task / s.n_token_blocks, t0, t1, out);
        });
        return;
    }
    int64_t max_kv = 0;
    for (int64_t t = 0; t < n_tokens; ++t) max_kv = std::max<int64_t>(max_kv, n_kv[t]);
    const int64_t base_tasks = n_head_kv * s.n_token_blocks;
    s.n_segments = base_tasks < k_min_tasks ? std::max<int64_t>(1, ceil_div(max_kv, k_segment)) : 1;

    const int64_t state_floats = head_dim + 2;
    const int64_t rows_per_task = k_tokens_per_task * s.group;
    // Segment partials for the merge; the caller's thread owns this buffer.
    thread_local std::vector<float> partials_storage;
    if (s.n_segments > 1)
        partials_storage.resize(static_cast<size_t>(s.n_segments * n_tokens * n_head * state_floats));
    float * const partials = partials_storage.data();   // by pointer: workers have their own thread_locals

    const int64_t n_tasks = n_head_kv * s.n_token_blocks * s.n_segments;
    pool.parallel_for(n_tasks, [&](int64_t task, int) {
        const int64_t seg = task % s.n_segments;
        // Later token blocks see more positions (causal): hand them out first, so the last tasks
        // are the short ones and the threads finish together.
        const int64_t tb = s.n_token_blocks - 1 - (task / s.n_segments) % s.n_token_blocks;
        const int64_t g = task / (s.n_segments * s.n_token_blocks);
        const int64_t t0 = tb * k_tokens_per_task, t1 = std::min(t0 + k_tokens_per_task, n_tokens);
        // One segment per task, or every segment of these tokens in turn.
        const int64_t p0 = s.n_segments > 1 ? seg * k_segment : 0;
        const int64_t p1 = s.n_segments > 1 ? p0 + k_segment : std::max<int64_t>(max_kv, 1);

        thread_scratch & sc = local_scratch();
        sc.state.resize(static_cast<size_t>(rows_per_task * state_floats));
        float * st = sc.state.data();
        attend_segments(q, n_kv, kv, s, g, t0, t1, p0, p1, st, sc.segment);

        for (int64_t t = t0; t < t1; ++t)
            for (int64_t j = 0; j < s.group; ++j) {
                const int64_t h = g * s.group + j;
                const float * row = st + ((t - t0) * s.group + j) * state_floats;
                if (s.n_segments > 1) {
                    float * dst = partials + ((seg * n_tokens + t) * n_head + h) * state_floats;
                    std::copy(row, row + state_floats, dst);
                    continue;
                }
                float * o = out + (t * n_head + h) * head_dim;
                const float inv = row[1] > 0.0f ? 1.0f / row[1] : 0.0f;
                for (int64_t d = 0; d < head_dim; ++d) o[d] = row[2 + d] * inv;
            }
    });
    if (s.n_segments == 1) return;

    // Merge the segments of each (token, head) in order, as attend_segments does.
    std::vector<float> total(static_cast<size_t>(state_floats));
    for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t h = 0; h < n_head; ++h) {
            total[0] = -INFINITY;
            std::fill(total.begin() + 1, total.end(), 0.0f);
            for (int64_t seg = 0; seg < s.n_segments; ++seg)
                merge_state(total.data(), partials + ((seg * n_tokens + t) * n_head + h) * state_floats, head_dim);
            float * o = out + (t * n_head + h) * head_dim;
            const float inv = total[1] > 0.0f ? 1.0f / total[1] : 0.0f;
            for (int64_t d = 0; d < head_dim; ++d) o[d] = total[2 + d] * inv;
        }
}

}  // namespace hearth::kernels
