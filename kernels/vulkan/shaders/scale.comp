#version 450
// x[i] *= s over n elements, in place.
layout(local_size_x = 64) in;

layout(binding = 0, std430) buffer x_buf { float x[]; };
layout(push_constant) uniform params { uint n; float s; } p;

void main() {
    const uint i = gl_WorkGroupID.y * gl_NumWorkGroups.x * 64u + gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    precise float v = x[i] * p.s;
    x[i] = v;
}
