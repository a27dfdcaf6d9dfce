#version 450
// y = x / sqrt(mean(x^2) + eps) * w, one workgroup per row, the scaling as the CPU rounds it.
// The CPU sums the f32 squares in double; with HEARTH_F64 (devices with shaderFloat64) so does
// this shader: the double sum of a row's f32 squares is exact in practice in any order, so the
// result is the CPU's bit for bit. Without it the sum is f32 (the stated tolerance).
#define WG_SIZE 64u
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer x_buf { float x[]; };
layout(binding = 1, std430) readonly buffer w_buf { float w[]; };
layout(binding = 2, std430) writeonly buffer y_buf { float y[]; };
layout(push_constant) uniform params { uint n; uint has_weight; float eps; } p;

#include "common.glsl"

void main() {
    const uint base = gl_WorkGroupID.x * p.n;
    const uint tid = gl_LocalInvocationID.x;
#if HEARTH_F64
    double s = 0.0LF;
    for (uint i = tid; i < p.n; i += WG_SIZE) {
        precise float sq = x[base + i] * x[base + i];
        s += double(sq);
    }
    const float mean = float(workgroup_sum_f64(s) / double(p.n));
#else
    float s = 0.0;
    for (uint i = tid; i < p.n; i += WG_SIZE) s += x[base + i] * x[base + i];
    const float mean = workgroup_sum(s) / float(p.n);
#endif
    precise float scale = 1.0 / sqrt(mean + p.eps);
    for (uint i = tid; i < p.n; i += WG_SIZE) {
        precise float v = x[base + i] * scale;
        if (p.has_weight != 0u) v = v * w[i];
        y[base + i] = v;
    }
}
