#version 450
// y[t] = sum over the picks j in order of weights[t][j] * x[t][j], each product and each sum
// rounded on its own as inference/graph/moe.cpp takes them (the weighted slot, then the slots added in
// pick order), so the result is the CPU's bit for bit. One invocation per output element.
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer x_buf { float x[]; };        // [n_tokens][n_used][n]
layout(binding = 1, std430) readonly buffer w_buf { float weights[]; };  // [n_tokens][n_used]
layout(binding = 2, std430) writeonly buffer y_buf { float y[]; };       // [n_tokens][n]
layout(push_constant) uniform params { uint n_tokens; uint n_used; uint n; } p;

void main() {
    const uint i = gl_WorkGroupID.y * gl_NumWorkGroups.x * 64u + gl_GlobalInvocationID.x;
    if (i >= p.n_tokens * p.n) return;
    const uint t = i / p.n, c = i % p.n;
    const uint pick0 = t * p.n_used;
    precise float o = x[pick0 * p.n + c] * weights[pick0];
    for (uint j = 1u; j < p.n_used; ++j) {
        precise float slot = x[(pick0 + j) * p.n + c] * weights[pick0 + j];
        o = o + slot;
    }
    y[i] = o;
}
