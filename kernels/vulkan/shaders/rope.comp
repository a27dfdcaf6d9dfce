#version 450
// Rotary position embedding in place, one invocation per (pair, head, token). The angle of pair i
// is freq_scale * pos * theta_scale^i by i repeated f32 multiplications, as the CPU takes it
// (divided by freq_factors[i] before the scaling where the model has them); cos and sin are taken
// times attn_factor, then the rotation is the CPU's (the first product fused, the second rounded).
// Normal mode rotates (2i, 2i + 1), NeoX (i, i + n_rot / 2); dimensions past n_rot are left alone.
layout(local_size_x = 64) in;

layout(binding = 0, std430) buffer x_buf { float x[]; };
layout(binding = 1, std430) readonly buffer pos_buf { int pos[]; };
layout(binding = 2, std430) readonly buffer factors_buf { float freq_factors[]; };
layout(push_constant) uniform params {
    uint n_tokens; uint n_head; uint head_dim; uint n_rot; float theta_scale; float freq_scale;
    uint has_factors; float attn_factor;
} p;

void main() {
    const uint i = gl_GlobalInvocationID.x;
    const uint h = gl_WorkGroupID.y;
    const uint t = gl_WorkGroupID.z;
    if (i >= p.n_rot / 2u) return;
    precise float theta = float(pos[t]);
    for (uint k = 0u; k < i; ++k) theta = theta * p.theta_scale;
    if (p.has_factors != 0u) theta = theta / freq_factors[i];
    precise float angle = p.freq_scale * theta;
    precise float c = cos(angle) * p.attn_factor;
    precise float s = sin(angle) * p.attn_factor;
    const uint base = (t * p.n_head + h) * p.head_dim;
#if HEARTH_ROPE_NEOX
    const uint ia = base + i, ib = base + i + p.n_rot / 2u;
#else
    const uint ia = base + 2u * i, ib = base + 2u * i + 1u;
#endif
    const float x0 = x[ia], x1 = x[ib];
    precise float x1s = x1 * s;
    precise float x1c = x1 * c;
    x[ia] = fma(x0, c, -x1s);
    x[ib] = fma(x0, s, x1c);
}
