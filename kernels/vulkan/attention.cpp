// The KV cache operations: appending a batch's rows to a cache, and attention over it.
#include <cassert>
#include <string>

#include "kernels/quant.h"
#include "kernels/vulkan/buffer.h"
#include "kernels/vulkan/device.h"
#include "kernels/vulkan/ops.h"
#include "kernels/vulkan/pipelines.h"
#include "kernels/vulkan/push_constants.h"
#include "kernels/vulkan/stream.h"

namespace hearth::kernels::vulkan {

bool supports_cache(tensor_type t, int64_t n_embd_kv) {
    if (n_embd_kv <= 0) return false;
    if (t == tensor_type::f16) return n_embd_kv % 2 == 0;
    return (t == tensor_type::q8_0 || t == tensor_type::q4_0) && n_embd_kv % 64 == 0;
}

void kv_append(stream & s, tensor_type type, const buffer & src, const buffer & cache, int32_t first_pos,
               int64_t n_tokens, int64_t n_embd_kv) {
    assert(n_tokens > 0 && supports_cache(type, n_embd_kv) && first_pos >= 0);
    assert(src.size() >= static_cast<size_t>(n_tokens * n_embd_kv) * sizeof(float));
    assert(cache.size() >= static_cast<size_t>(first_pos + n_tokens) * row_size(type, n_embd_kv));
    const kv_append_push push{static_cast<uint32_t>(n_tokens), static_cast<uint32_t>(n_embd_kv),
                              static_cast<uint32_t>(first_pos)};
    // One invocation per f16 word, or per pair of quantized blocks.
    const uint32_t per_row = static_cast<uint32_t>(type == tensor_type::f16 ? n_embd_kv / 2 : n_embd_kv / 64);
    s.dispatch(s.dev().pipelines().get("kv_append_" + std::string(tensor_type_info(type).name)), {&src, &cache}, &push,
               (per_row + 63) / 64, static_cast<uint32_t>(n_tokens));
}

void attention(stream & s, tensor_type k_type, tensor_type v_type, const buffer & q, const buffer & k,
               const buffer & v, const buffer & n_kv, const buffer & kv_start, const buffer & scores,
               const buffer & out, const attention_shape & a) {
    assert(a.n_tokens > 0 && a.n_head_kv > 0 && a.n_head % a.n_head_kv == 0);
    assert(a.head_dim > 0 && a.head_dim <= 256 && a.n_ctx > 0);
    assert(q.size() >= static_cast<size_t>(a.n_tokens * a.n_head * a.head_dim) * sizeof(float));
    assert(out.size() >= q.size());
    assert(n_kv.size() >= static_cast<size_t>(a.n_tokens) * sizeof(int32_t) && kv_start.size() >= n_kv.size());
    assert(scores.size() >= static_cast<size_t>(a.n_tokens * a.n_head * a.n_ctx) * sizeof(float));
    [[maybe_unused]] const int64_t n_embd_kv = a.n_head_kv * a.head_dim;   // for the asserts
    assert(supports_cache(k_type, n_embd_kv) && supports_cache(v_type, n_embd_kv));
    assert(k.size() >= static_cast<size_t>(a.n_ctx) * row_size(k_type, n_embd_kv));
    assert(v.size() >= static_cast<size_t>(a.n_ctx) * row_size(v_type, n_embd_kv));
    const attention_push push{static_cast<uint32_t>(a.n_tokens), static_cast<uint32_t>(a.n_head),
                              static_cast<uint32_t>(a.n_head_kv), static_cast<uint32_t>(a.head_dim),
                              static_cast<uint32_t>(a.n_ctx), a.scale};
    const std::string name = "attention_" + std::string(tensor_type_info(k_type).name) + "_" +
                             std::string(tensor_type_info(v_type).name);
    s.dispatch(s.dev().pipelines().get(name), {&q, &k, &v, &n_kv, &kv_start, &scores, &out}, &push,
               static_cast<uint32_t>(a.n_head), static_cast<uint32_t>(a.n_tokens));
}

}  // namespace hearth::kernels::vulkan
