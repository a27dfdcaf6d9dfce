#version 450
// y[i] = a[i] * b[i % n_b]: element by element (n_b = n) and a vector over every row (n_b = width).
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer a_buf { float a[]; };
layout(binding = 1, std430) readonly buffer b_buf { float b[]; };
layout(binding = 2, std430) writeonly buffer y_buf { float y[]; };
layout(push_constant) uniform params { uint n; uint n_b; } p;

void main() {
    const uint i = gl_WorkGroupID.y * gl_NumWorkGroups.x * 64u + gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    precise float v = a[i] * b[i % p.n_b];
    y[i] = v;
}
