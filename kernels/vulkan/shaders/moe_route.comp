#version 450
// The mixture-of-experts router, one invocation per token, as inference/graph/moe.cpp takes it: the
// softmax of the token's logits (max-subtracted; the exps summed in order, in double with
// HEARTH_F64, f32 otherwise; times the f32 of 1 / sum), the top n_used experts best first with
// ties to the lower id, and their probabilities divided by their sum (double with HEARTH_F64,
// clamped below at 6.103515625e-5). The device's exp is not the CPU's: the probabilities agree to
// a few ulp, the picks wherever two probabilities are not that close.
// A probability is recomputed where needed (no scratch): the same arithmetic gives the same bits.
layout(local_size_x = 64) in;

layout(binding = 0, std430) readonly buffer logits_buf { float logits[]; };   // [n_tokens][n_expert]
layout(binding = 1, std430) writeonly buffer ids_buf { int ids[]; };           // [n_tokens][n_used]
layout(binding = 2, std430) buffer weights_buf { float weights[]; };          // [n_tokens][n_used]
layout(push_constant) uniform params { uint n_tokens; uint n_expert; uint n_used; } p;

#if HEARTH_F64
#define SUM_T double
#else
#define SUM_T float
#endif

uint base;
float max_logit;
float inv_sum;

float prob(uint e) {
    precise float v = exp(logits[base + e] - max_logit) * inv_sum;
    return v;
}

void main() {
    const uint t = gl_WorkGroupID.y * gl_NumWorkGroups.x * 64u + gl_GlobalInvocationID.x;
    if (t >= p.n_tokens) return;
    base = t * p.n_expert;
    max_logit = uintBitsToFloat(0xff800000u);   // -inf
    for (uint e = 0u; e < p.n_expert; ++e) max_logit = max(max_logit, logits[base + e]);
    SUM_T sum = SUM_T(0);
    for (uint e = 0u; e < p.n_expert; ++e) {
        precise float v = exp(logits[base + e] - max_logit);
        sum += SUM_T(v);
    }
    inv_sum = float(SUM_T(1) / sum);

    // Pick j is the best expert after pick j - 1 in the order (probability down, id up).
    const uint out0 = t * p.n_used;
    float prev_p = uintBitsToFloat(0x7f800000u);   // +inf
    int prev_id = -1;
    SUM_T picked = SUM_T(0);
    for (uint j = 0u; j < p.n_used; ++j) {
        int best = -1;
        float best_p = 0.0;
        for (uint e = 0u; e < p.n_expert; ++e) {
            const float pe = prob(e);
            const bool after_prev = pe < prev_p || (pe == prev_p && int(e) > prev_id);
            if (after_prev && (best < 0 || pe > best_p)) {
                best = int(e);
                best_p = pe;
            }
        }
        ids[out0 + j] = best;
        weights[out0 + j] = best_p;
        picked += SUM_T(best_p);
        prev_p = best_p;
        prev_id = best;
    }
    const float norm = max(float(picked), 6.103515625e-5);
    for (uint j = 0u; j < p.n_used; ++j) {
        precise float w = weights[out0 + j] / norm;
        weights[out0 + j] = w;
    }
}
