// attention_shape: the shape of one attention() call on a compute device, the same struct for the
// device_ops interface (kernels/device_ops.h) and every backend's operation (kernels/vulkan/ops.h,
// kernels/cuda/ops.h), so a shape passes from the layer graph to a kernel unconverted.
// Thread-safety: a plain value type.
#pragma once

#include <cstdint>

namespace hearth::kernels {

// q: [n_tokens][n_head * head_dim] f32; K and V: [n_pos][n_head_kv * head_dim] rows of the cache;
// scores: scratch of n_tokens * n_head * n_ctx floats, n_ctx >= every token's n_kv.
struct attention_shape {
    int64_t n_tokens;
    int64_t n_head;
    int64_t n_head_kv;
    int64_t head_dim;
    int64_t n_ctx;
    float scale;   // applied to q . k before the softmax
};

}  // namespace hearth::kernels
