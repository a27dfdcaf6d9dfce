// The element-wise and row-wise operations: RMS norm, LayerNorm, RoPE, SwiGLU, SiLU, GELU, add,
// mul, scale.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/vulkan/buffer.h"
#include "kernels/vulkan/device.h"
#include "kernels/vulkan/ops.h"
#include "kernels/vulkan/pipelines.h"
#include "kernels/vulkan/push_constants.h"
#include "kernels/vulkan/stream.h"

namespace hearth::kernels::vulkan {
namespace {

constexpr uint32_t k_wg = 64;

uint32_t groups(int64_t n) { return static_cast<uint32_t>((n + k_wg - 1) / k_wg); }

[[maybe_unused]] bool holds_floats(const buffer & b, int64_t n) { return b.size() >= static_cast<size_t>(n) * sizeof(float); }

// One invocation per element: long vectors (512 tokens of an FFN) exceed one dimension's group
// limit, so the groups wrap into y (the shaders index gl_WorkGroupID.y * gl_NumWorkGroups.x * 64 + x).
void dispatch_elementwise(stream & s, const char * op, std::initializer_list<const buffer *> buffers,
                          const void * push, int64_t n) {
    const uint32_t total = groups(n);
    const uint32_t gx = std::min(total, s.dev().caps().max_workgroup_count_x);
    s.dispatch(s.dev().pipelines().get(op), buffers, push, gx, (total + gx - 1) / gx);
}

}  // namespace

void rms_norm(stream & s, const buffer & x, const buffer * w, const buffer & y, int64_t n_tokens, int64_t n, float eps) {
    assert(n_tokens > 0 && n > 0);
    assert(x.size() >= static_cast<size_t>(n_tokens * n) * sizeof(float) && y.size() >= x.size());
    assert(!w || w->size() >= static_cast<size_t>(n) * sizeof(float));
    const rms_norm_push push{static_cast<uint32_t>(n), w ? 1u : 0u, eps};
    // Without a weight the shader never reads binding 1; x stands in for it.
    s.dispatch(s.dev().pipelines().get("rms_norm"), {&x, w ? w : &x, &y}, &push, static_cast<uint32_t>(n_tokens));
}

void layer_norm(stream & s, const buffer & x, const buffer * w, const buffer * b, const buffer & y, int64_t n_tokens,
                int64_t n, float eps) {
    assert(n_tokens > 0 && n > 0);
    assert(holds_floats(x, n_tokens * n) && holds_floats(y, n_tokens * n));
    assert((!w || holds_floats(*w, n)) && (!b || holds_floats(*b, n)));
    const layer_norm_push push{static_cast<uint32_t>(n), w ? 1u : 0u, b ? 1u : 0u, eps};
    // The shader never reads an absent weight or bias; x stands in for it.
    s.dispatch(s.dev().pipelines().get("layer_norm"), {&x, w ? w : &x, b ? b : &x, &y}, &push,
               static_cast<uint32_t>(n_tokens));
}

void rope(stream & s, const buffer & x, const buffer & pos, int64_t n_tokens, int64_t n_head, int64_t head_dim,
          const rope_params & p, const buffer * freq_factors) {
    assert(p.n_rot > 0 && p.n_rot % 2 == 0 && p.n_rot <= head_dim);
    assert(holds_floats(x, n_tokens * n_head * head_dim));
    assert(pos.size() >= static_cast<size_t>(n_tokens) * sizeof(int32_t));
    assert(!freq_factors || holds_floats(*freq_factors, p.n_rot / 2));
    // The same f32 power the CPU takes (kernels/ops.cpp), so the angles are its angles.
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    const rope_push push{static_cast<uint32_t>(n_tokens), static_cast<uint32_t>(n_head),
                         static_cast<uint32_t>(head_dim), static_cast<uint32_t>(p.n_rot), theta_scale, p.freq_scale,
                         freq_factors ? 1u : 0u, p.attn_factor};
    const char * name = p.mode == rope_mode::neox ? "rope_neox" : "rope_normal";
    // Without factors the shader never reads binding 2; pos stands in for it.
    s.dispatch(s.dev().pipelines().get(name), {&x, &pos, freq_factors ? freq_factors : &pos}, &push,
               groups(p.n_rot / 2), static_cast<uint32_t>(n_head), static_cast<uint32_t>(n_tokens));
}

void swiglu(stream & s, const buffer & gate, const buffer & up, const buffer & y, int64_t n) {
    assert(n > 0);
    assert(gate.size() >= static_cast<size_t>(n) * sizeof(float) && up.size() >= static_cast<size_t>(n) * sizeof(float));
    assert(y.size() >= static_cast<size_t>(n) * sizeof(float));
    const swiglu_push push{static_cast<uint32_t>(n)};
    dispatch_elementwise(s, "swiglu", {&gate, &up, &y}, &push, n);
}

void silu(stream & s, const buffer & x, const buffer & y, int64_t n) {
    assert(n > 0 && holds_floats(x, n) && holds_floats(y, n));
    const elementwise_push push{static_cast<uint32_t>(n)};
    dispatch_elementwise(s, "silu", {&x, &y}, &push, n);
}

void gelu(stream & s, const buffer & x, const buffer & gelu_table, const buffer & y, int64_t n) {
    assert(n > 0 && holds_floats(x, n) && holds_floats(y, n));
    assert(gelu_table.size() >= (1u << 16) * sizeof(uint16_t));
    const elementwise_push push{static_cast<uint32_t>(n)};
    dispatch_elementwise(s, "gelu", {&x, &gelu_table, &y}, &push, n);
}

result<buffer> make_gelu_table(const device & dev) {
    // Entry h is what kernels::gelu gives for an input that rounds to fp16 h: its table's entry,
    // read back through the CPU function itself (its table is private to kernels/ops.cpp). The
    // inputs it takes from the table lie in (-10, 10); +-10 itself is reached from just inside.
    std::vector<uint16_t> table(1u << 16, 0);
    for (uint32_t h = 0; h < table.size(); ++h) {
        float v = fp16_to_fp32(static_cast<uint16_t>(h));
        if (std::isnan(v)) continue;
        if (std::fabs(v) == 10.0f) v = std::nextafter(v, 0.0f);
        if (!(std::fabs(v) < 10.0f) || fp32_to_fp16(v) != h) continue;
        float g = 0;
        kernels::gelu(&v, &g, 1);
        table[h] = fp32_to_fp16(g);
    }
    auto b = buffer::create(dev, table.size() * sizeof(uint16_t));
    if (!b) return b.error();
    if (status st = b->upload(table.data(), table.size() * sizeof(uint16_t)); !st) return st.error();
    return std::move(*b);
}

void add(stream & s, const buffer & a, const buffer & b, const buffer & y, int64_t n, int64_t n_b) {
    assert(n > 0 && n_b > 0 && n % n_b == 0);
    assert(a.size() >= static_cast<size_t>(n) * sizeof(float) && y.size() >= static_cast<size_t>(n) * sizeof(float));
    assert(b.size() >= static_cast<size_t>(n_b) * sizeof(float));
    const binary_push push{static_cast<uint32_t>(n), static_cast<uint32_t>(n_b)};
    dispatch_elementwise(s, "add", {&a, &b, &y}, &push, n);
}

void mul(stream & s, const buffer & a, const buffer & b, const buffer & y, int64_t n, int64_t n_b) {
    assert(n > 0 && n_b > 0 && n % n_b == 0);
    assert(holds_floats(a, n) && holds_floats(b, n_b) && holds_floats(y, n));
    const binary_push push{static_cast<uint32_t>(n), static_cast<uint32_t>(n_b)};
    dispatch_elementwise(s, "mul", {&a, &b, &y}, &push, n);
}

void scale(stream & s, const buffer & x, float factor, int64_t n) {
    assert(n > 0 && holds_floats(x, n));
    const scale_push push{static_cast<uint32_t>(n), factor};
    dispatch_elementwise(s, "scale", {&x}, &push, n);
}

}  // namespace hearth::kernels::vulkan
