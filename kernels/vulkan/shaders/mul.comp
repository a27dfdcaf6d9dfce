#version 450
// y[i] = a[i] * b[i] over n elements.
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer a_buf { float a[]; };
layout(binding = 1, std430) readonly buffer b_buf { float b[]; };
layout(binding = 2, std430) writeonly buffer y_buf { float y[]; };
layout(push_constant) uniform params { uint n; } p;

void main() {
    const uint i = gl_WorkGroupID.y * gl_NumWorkGroups.x * 64u + gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    precise float v = a[i] * b[i];
    y[i] = v;
}
