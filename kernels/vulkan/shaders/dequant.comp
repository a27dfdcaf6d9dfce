#version 450
// out[r][c * 32 + j] = element c * 32 + j of weight row r, as the CPU decodes it: one invocation
// per 32-element chunk (and one for a plain type's tail). The bit-exactness check of the decoding the products use.
#define WG_SIZE 64u
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer weights_buf { uint w_words[]; };
layout(binding = 1, std430) writeonly buffer out_buf { float out_vals[]; };
layout(push_constant) uniform params { uint n_rows; uint n_cols; uint row_bytes; } p;

#include "common.glsl"
#include "dequant.glsl"

void main() {
    const uint c = gl_GlobalInvocationID.x;
    const uint r = gl_WorkGroupID.y;
    if (r >= p.n_rows) return;
    if (c < p.n_cols / 32u) {
        load_chunk(r * p.row_bytes, c);
        [[unroll]] for (uint j = 0u; j < 32u; ++j) out_vals[r * p.n_cols + c * 32u + j] = chunk_vals[j];
    }
#if HAS_TAIL
    else if (c == p.n_cols / 32u) {   // the elements past the last whole chunk
        for (uint i = c * 32u; i < p.n_cols; ++i) out_vals[r * p.n_cols + i] = load_one(r * p.row_bytes, i);
    }
#endif
}
