#version 450
// y = x / sqrt(mean(x^2) + eps) * w, one workgroup per row. The sum of squares is f32 (the CPU
// sums in double: the difference is the stated tolerance), the scaling as the CPU rounds it.
#define WG_SIZE 64u
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer x_buf { float x[]; };
layout(binding = 1, std430) readonly buffer w_buf { float w[]; };
layout(binding = 2, std430) writeonly buffer y_buf { float y[]; };
layout(push_constant) uniform params { uint n; uint has_weight; float eps; } p;

#include "common.glsl"

void main() {
    const uint base = gl_WorkGroupID.x * p.n;
    float s = 0.0;
    for (uint i = gl_LocalInvocationID.x; i < p.n; i += WG_SIZE) s += x[base + i] * x[base + i];
    const float mean = workgroup_sum(s) / float(p.n);
    precise float scale = 1.0 / sqrt(mean + p.eps);
    for (uint i = gl_LocalInvocationID.x; i < p.n; i += WG_SIZE) {
        precise float v = x[base + i] * scale;
        if (p.has_weight != 0u) v = v * w[i];
        y[base + i] = v;
    }
}
