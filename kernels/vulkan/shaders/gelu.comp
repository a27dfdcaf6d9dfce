#version 450
// y = gelu(x) as the CPU takes it (kernels/ops.cpp gelu): 0 at or below -10, x at or above 10, and
// in between the entry of its table of fp16 values for x rounded to fp16. The table is the CPU's
// own (65536 fp16 values, two a word), uploaded once with the device, so the result is its bits.
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer x_buf { float x[]; };
layout(binding = 1, std430) readonly buffer table_buf { uint table[]; };
layout(binding = 2, std430) writeonly buffer y_buf { float y[]; };
layout(push_constant) uniform params { uint n; } p;

#define WG_SIZE 64u
#include "common.glsl"

void main() {
    const uint i = gl_WorkGroupID.y * gl_NumWorkGroups.x * 64u + gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    const float v = x[i];
    if (v <= -10.0) {
        y[i] = 0.0;
    } else if (v >= 10.0) {
        y[i] = v;
    } else {
        const uint h = float_to_half(v);
        y[i] = half_to_float((table[h >> 1] >> ((h & 1u) * 16u)) & 0xffffu);
    }
}
