// The push-constant block of each shader, field for field as the shader declares it (std430:
// 4-byte scalars only, so the C++ layout is the same). Sizes are 128 bytes at most, the least
// every Vulkan device allows.
// Thread-safety: plain data.
#pragma once

#include <cstdint>

namespace hearth::kernels::vulkan {

struct dequant_push {        // shaders/dequant.comp
    uint32_t n_rows;
    uint32_t n_cols;
    uint32_t row_bytes;
};

struct matmul_push {         // shaders/matmul.comp: y[t][r] = w row r . x[t]
    uint32_t n_rows;
    uint32_t n_cols;
    uint32_t row_bytes;
    uint32_t n_tokens;
    uint32_t groups_x;       // workgroups along x: row = group.y * groups_x + group.x
};

struct matmul_experts_push { // shaders/matmul.comp with HEARTH_EXPERTS: y[q][r] = w row (ids[q] * n_rows + r) . x[q']
    uint32_t n_rows;         // rows of one expert
    uint32_t n_cols;
    uint32_t row_bytes;
    uint32_t n_tokens;       // picks: tokens * n_used
    uint32_t groups_x;
    uint32_t n_used;
    uint32_t x_per_pick;     // 1: activation row q' = q; 0: q' = q / n_used (the pick's token)
};

struct quantize_push {       // shaders/quantize_q8_0.comp, quantize_q8_k.comp
    uint32_t n_blocks;       // of 32 (q8_0) or 256 (q8_K) values
};

struct rms_norm_push {       // shaders/rms_norm.comp
    uint32_t n;
    uint32_t has_weight;
    float eps;
};

struct layer_norm_push {     // shaders/layer_norm.comp
    uint32_t n;
    uint32_t has_weight;
    uint32_t has_bias;
    float eps;
};

struct rope_push {           // shaders/rope.comp
    uint32_t n_tokens;
    uint32_t n_head;
    uint32_t head_dim;
    uint32_t n_rot;
    float theta_scale;       // freq_base^(-2/n_rot), taken on the host as the CPU takes it
    float freq_scale;
    uint32_t has_factors;    // freq_factors bound (binding 2) divide the angles
    float attn_factor;       // cos and sin times this
};

struct swiglu_push {         // shaders/swiglu.comp
    uint32_t n;
};

struct elementwise_push {   // shaders/silu.comp, gelu.comp
    uint32_t n;
};

struct scale_push {          // shaders/scale.comp: x[i] *= s
    uint32_t n;
    float s;
};

struct binary_push {         // shaders/add.comp, mul.comp: y[i] = a[i] op b[i % n_b]
    uint32_t n;
    uint32_t n_b;
};

struct moe_route_push {      // shaders/moe_route.comp
    uint32_t n_tokens;
    uint32_t n_expert;
    uint32_t n_used;
};

struct moe_combine_push {    // shaders/moe_combine.comp
    uint32_t n_tokens;
    uint32_t n_used;
    uint32_t n;
};

struct kv_append_push {      // shaders/kv_append.comp
    uint32_t n_tokens;
    uint32_t n_embd_kv;      // even
    uint32_t first_pos;
};

struct attention_push {      // shaders/attention.comp
    uint32_t n_tokens;
    uint32_t n_head;
    uint32_t n_head_kv;
    uint32_t head_dim;
    uint32_t n_ctx;          // positions per (token, head) row of the scores scratch
    float scale;
};

}  // namespace hearth::kernels::vulkan
