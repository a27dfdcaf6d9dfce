#version 450
// Attention of one query head of one token over an f16 cache, one workgroup per (head, token):
//   out = sum_p softmax_p(scale * q . K[p][g]) * V[p][g],  kv_start[t] <= p < n_kv[t],
// with g = h / (n_head / n_head_kv). The scores go to a scratch row of n_ctx floats; max and sum
// are workgroup reductions; everything is f32.
#define WG_SIZE 64u
#define MAX_HEAD_DIM 256u
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer q_buf { float q[]; };
layout(binding = 1, std430) readonly buffer k_buf { uint k_words[]; };
layout(binding = 2, std430) readonly buffer v_buf { uint v_words[]; };
layout(binding = 3, std430) readonly buffer n_kv_buf { int n_kv[]; };
layout(binding = 4, std430) readonly buffer kv_start_buf { int kv_start[]; };
layout(binding = 5, std430) buffer scores_buf { float scores[]; };
layout(binding = 6, std430) writeonly buffer out_buf { float o[]; };
layout(push_constant) uniform params {
    uint n_tokens; uint n_head; uint n_head_kv; uint head_dim; uint n_ctx; float scale;
} p;

#include "common.glsl"

shared float q_s[MAX_HEAD_DIM];

float k_at(uint idx) { return half_to_float((k_words[idx >> 1] >> ((idx & 1u) << 4)) & 0xffffu); }
float v_at(uint idx) { return half_to_float((v_words[idx >> 1] >> ((idx & 1u) << 4)) & 0xffffu); }

void main() {
    const uint h = gl_WorkGroupID.x;
    const uint t = gl_WorkGroupID.y;
    const uint tid = gl_LocalInvocationID.x;
    const uint g = h / (p.n_head / p.n_head_kv);
    const uint qo = (t * p.n_head + h) * p.head_dim;
    const uint start = uint(max(kv_start[t], 0));
    const uint end = uint(max(n_kv[t], 0));
    if (end <= start) {   // nothing to attend to: 0, the whole workgroup
        for (uint d = tid; d < p.head_dim; d += WG_SIZE) o[qo + d] = 0.0;
        return;
    }
    for (uint d = tid; d < p.head_dim; d += WG_SIZE) q_s[d] = q[qo + d];
    barrier();

    const uint row_stride = p.n_head_kv * p.head_dim;   // f16 elements per cache position
    const uint sb = (t * p.n_head + h) * p.n_ctx;
    float mx = -1.0 / 0.0;
    for (uint pos = start + tid; pos < end; pos += WG_SIZE) {
        const uint kb = pos * row_stride + g * p.head_dim;
        float s = 0.0;
        for (uint d = 0u; d < p.head_dim; ++d) s += q_s[d] * k_at(kb + d);
        s *= p.scale;
        scores[sb + pos] = s;
        mx = max(mx, s);
    }
    const float m = workgroup_max(mx);
    float sum = 0.0;
    for (uint pos = start + tid; pos < end; pos += WG_SIZE) {
        const float e = exp(scores[sb + pos] - m);
        scores[sb + pos] = e;
        sum += e;
    }
    const float total = workgroup_sum(sum);
    memoryBarrierBuffer();
    barrier();
    for (uint d = tid; d < p.head_dim; d += WG_SIZE) {
        float acc = 0.0;
        for (uint pos = start; pos < end; ++pos) acc += scores[sb + pos] * v_at(pos * row_stride + g * p.head_dim + d);
        o[qo + d] = acc / total;
    }
}
