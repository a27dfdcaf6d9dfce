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

struct quantize_push {       // shaders/quantize_q8_0.comp
    uint32_t n_blocks;
};

struct rms_norm_push {       // shaders/rms_norm.comp
    uint32_t n;
    uint32_t has_weight;
    float eps;
};

struct rope_push {           // shaders/rope.comp
    uint32_t n_tokens;
    uint32_t n_head;
    uint32_t head_dim;
    uint32_t n_rot;
    float theta_scale;       // freq_base^(-2/n_rot), taken on the host as the CPU takes it
    float freq_scale;
};

struct swiglu_push {         // shaders/swiglu.comp
    uint32_t n;
};

struct add_push {            // shaders/add.comp: y[i] = a[i] + b[i % n_b]
    uint32_t n;
    uint32_t n_b;
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
