#version 450
// y = silu(x) = x / (1 + exp(-x)), element-wise, with the CPU's exp (as swiglu.comp).
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer x_buf { float x[]; };
layout(binding = 1, std430) writeonly buffer y_buf { float y[]; };
layout(push_constant) uniform params { uint n; } p;

#define WG_SIZE 64u
#include "common.glsl"

void main() {
    const uint i = gl_WorkGroupID.y * gl_NumWorkGroups.x * 64u + gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    precise float v = x[i] / (1.0 + exp_ggml(0.0 - x[i]));
    y[i] = v;
}
