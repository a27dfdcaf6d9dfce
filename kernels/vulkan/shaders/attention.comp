#version 450
// Attention of one query head of one token over a cache, one workgroup per (head, token):
//   out = sum_p softmax_p(scale * q . K[p][g]) * V[p][g],  kv_start[t] <= p < n_kv[t],
// with g = h / (n_head / n_head_kv). K and V each f16, q8_0 or q4_0 (HEARTH_K_<TYPE>,
// HEARTH_V_<TYPE>), decoded as kernels/cpu/generic dequantizes them (the `precise` products);
// a quantized row is whole 32-element blocks. The scores go to a scratch row of n_ctx floats;
// max and sum are workgroup reductions; everything is f32.
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

uint k_u8(uint off) { return (k_words[off >> 2] >> ((off & 3u) << 3)) & 0xffu; }
uint k_u16(uint off) { return (k_words[off >> 2] >> ((off & 2u) << 3)) & 0xffffu; }   // off even
uint v_u8(uint off) { return (v_words[off >> 2] >> ((off & 3u) << 3)) & 0xffu; }
uint v_u16(uint off) { return (v_words[off >> 2] >> ((off & 2u) << 3)) & 0xffffu; }

float q8_0_value(uint d, uint q) {
    precise float v = float(int(q << 24) >> 24) * half_to_float(d);
    return v;
}
float q4_0_value(uint d, uint q, uint e) {   // q: the byte holding element e of its block
    precise float v = half_to_float(d) * float(int((e & 31u) < 16u ? q & 0x0fu : q >> 4) - 8);
    return v;
}

uint row_elems;    // n_head_kv * head_dim: one position's values
uint row_blocks;   // of 32, for the quantized types

// Element e of position pos's row, 0 <= e < row_elems.
#if HEARTH_K_F16
float k_at(uint pos, uint e) { return half_to_float(k_u16(2u * (pos * row_elems + e))); }
#elif HEARTH_K_Q8_0
float k_at(uint pos, uint e) {
    const uint b = (pos * row_blocks + (e >> 5)) * 34u;
    return q8_0_value(k_u16(b), k_u8(b + 2u + (e & 31u)));
}
#elif HEARTH_K_Q4_0
float k_at(uint pos, uint e) {
    const uint b = (pos * row_blocks + (e >> 5)) * 18u;
    return q4_0_value(k_u16(b), k_u8(b + 2u + (e & 15u)), e);
}
#else
#error "one HEARTH_K_<TYPE> must be defined"
#endif
#if HEARTH_V_F16
float v_at(uint pos, uint e) { return half_to_float(v_u16(2u * (pos * row_elems + e))); }
#elif HEARTH_V_Q8_0
float v_at(uint pos, uint e) {
    const uint b = (pos * row_blocks + (e >> 5)) * 34u;
    return q8_0_value(v_u16(b), v_u8(b + 2u + (e & 31u)));
}
#elif HEARTH_V_Q4_0
float v_at(uint pos, uint e) {
    const uint b = (pos * row_blocks + (e >> 5)) * 18u;
    return q4_0_value(v_u16(b), v_u8(b + 2u + (e & 15u)), e);
}
#else
#error "one HEARTH_V_<TYPE> must be defined"
#endif

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

    row_elems = p.n_head_kv * p.head_dim;
    row_blocks = row_elems / 32u;
    const uint head = g * p.head_dim;
    const uint sb = (t * p.n_head + h) * p.n_ctx;
    float mx = -1.0 / 0.0;
    for (uint pos = start + tid; pos < end; pos += WG_SIZE) {
        float s = 0.0;
        for (uint d = 0u; d < p.head_dim; ++d) s += q_s[d] * k_at(pos, head + d);
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
        for (uint pos = start; pos < end; ++pos) acc += scores[sb + pos] * v_at(pos, head + d);
        o[qo + d] = acc / total;
    }
}
