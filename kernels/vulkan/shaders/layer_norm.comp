#version 450
// y = (x - mean) / sqrt(var + eps) * w + b, one workgroup per row, each step rounded as the CPU
// rounds it (kernels/ops.cpp layer_norm: the centred value, then times the scale, the weight, plus
// the bias). The CPU sums x and the squared deviations in double; with HEARTH_F64 so does this
// shader (exact in practice in any order, as rms_norm's), otherwise in f32 (the stated tolerance).
#define WG_SIZE 64u
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer x_buf { float x[]; };
layout(binding = 1, std430) readonly buffer w_buf { float w[]; };
layout(binding = 2, std430) readonly buffer b_buf { float b[]; };
layout(binding = 3, std430) writeonly buffer y_buf { float y[]; };
layout(push_constant) uniform params { uint n; uint has_weight; uint has_bias; float eps; } p;

#include "common.glsl"

void main() {
    const uint base = gl_WorkGroupID.x * p.n;
    const uint tid = gl_LocalInvocationID.x;
#if HEARTH_F64
    double s = 0.0LF;
    for (uint i = tid; i < p.n; i += WG_SIZE) s += double(x[base + i]);
    const float mean = float(workgroup_sum_f64(s) / double(p.n));
    double s2 = 0.0LF;
    for (uint i = tid; i < p.n; i += WG_SIZE) {
        precise float v = x[base + i] - mean;
        precise float sq = v * v;
        s2 += double(sq);
    }
    const float variance = float(workgroup_sum_f64(s2) / double(p.n));
#else
    float s = 0.0;
    for (uint i = tid; i < p.n; i += WG_SIZE) s += x[base + i];
    const float mean = workgroup_sum(s) / float(p.n);
    float s2 = 0.0;
    for (uint i = tid; i < p.n; i += WG_SIZE) {
        const float v = x[base + i] - mean;
        s2 += v * v;
    }
    const float variance = workgroup_sum(s2) / float(p.n);
#endif
    precise float scale = 1.0 / sqrt(variance + p.eps);
    for (uint i = tid; i < p.n; i += WG_SIZE) {
        precise float v = x[base + i] - mean;
        v = v * scale;
        if (p.has_weight != 0u) v = v * w[i];
        if (p.has_bias != 0u) v = v + b[i];
        y[base + i] = v;
    }
}
