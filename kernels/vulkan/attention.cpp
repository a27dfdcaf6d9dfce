// The KV cache operations: appending a batch's rows to an f16 cache, and attention over it.
#include <cassert>

#include "kernels/vulkan/buffer.h"
#include "kernels/vulkan/device.h"
#include "kernels/vulkan/ops.h"
#include "kernels/vulkan/pipelines.h"
#include "kernels/vulkan/push_constants.h"
#include "kernels/vulkan/stream.h"

namespace hearth::kernels::vulkan {

void kv_append_f16(stream & s, const buffer & src, const buffer & cache, int32_t first_pos, int64_t n_tokens,
                   int64_t n_embd_kv) {
    assert(n_tokens > 0 && n_embd_kv > 0 && n_embd_kv % 2 == 0 && first_pos >= 0);
    assert(src.size() >= static_cast<size_t>(n_tokens * n_embd_kv) * sizeof(float));
    assert(cache.size() >= static_cast<size_t>((first_pos + n_tokens) * n_embd_kv) * 2);
    const kv_append_push push{static_cast<uint32_t>(n_tokens), static_cast<uint32_t>(n_embd_kv),
                              static_cast<uint32_t>(first_pos)};
    const uint32_t words = static_cast<uint32_t>(n_embd_kv / 2);
    s.dispatch(s.dev().pipelines().get("kv_append_f16"), {&src, &cache}, &push, (words + 63) / 64,
               static_cast<uint32_t>(n_tokens));
}

void attention_f16(stream & s, const buffer & q, const buffer & k, const buffer & v, const buffer & n_kv,
                   const buffer & kv_start, const buffer & scores, const buffer & out, const attention_shape & a) {
    assert(a.n_tokens > 0 && a.n_head_kv > 0 && a.n_head % a.n_head_kv == 0);
    assert(a.head_dim > 0 && a.head_dim <= 256 && a.n_ctx > 0);
    assert(q.size() >= static_cast<size_t>(a.n_tokens * a.n_head * a.head_dim) * sizeof(float));
    assert(out.size() >= q.size());
    assert(n_kv.size() >= static_cast<size_t>(a.n_tokens) * sizeof(int32_t) && kv_start.size() >= n_kv.size());
    assert(scores.size() >= static_cast<size_t>(a.n_tokens * a.n_head * a.n_ctx) * sizeof(float));
    assert(k.size() >= static_cast<size_t>(a.n_ctx * a.n_head_kv * a.head_dim) * 2 && v.size() >= k.size());
    const attention_push push{static_cast<uint32_t>(a.n_tokens), static_cast<uint32_t>(a.n_head),
                              static_cast<uint32_t>(a.n_head_kv), static_cast<uint32_t>(a.head_dim),
                              static_cast<uint32_t>(a.n_ctx), a.scale};
    s.dispatch(s.dev().pipelines().get("attention_f16"), {&q, &k, &v, &n_kv, &kv_start, &scores, &out}, &push,
               static_cast<uint32_t>(a.n_head), static_cast<uint32_t>(a.n_tokens));
}

}  // namespace hearth::kernels::vulkan
