#version 450
// y = silu(gate) * up = gate / (1 + exp(-gate)) * up, element-wise, with the CPU's exp.
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer gate_buf { float g[]; };
layout(binding = 1, std430) readonly buffer up_buf { float u[]; };
layout(binding = 2, std430) writeonly buffer y_buf { float y[]; };
layout(push_constant) uniform params { uint n; } p;

#define WG_SIZE 64u
#include "common.glsl"

void main() {
    const uint i = gl_WorkGroupID.y * gl_NumWorkGroups.x * 64u + gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    precise float v = g[i] / (1.0 + exp_ggml(0.0 - g[i])) * u[i];
    y[i] = v;
}
