// The element-wise and row-wise operations: RMS norm, RoPE, SwiGLU, add.
#include <algorithm>
#include <cassert>
#include <cmath>

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

}  // namespace

void rms_norm(stream & s, const buffer & x, const buffer * w, const buffer & y, int64_t n_tokens, int64_t n, float eps) {
    assert(n_tokens > 0 && n > 0);
    assert(x.size() >= static_cast<size_t>(n_tokens * n) * sizeof(float) && y.size() >= x.size());
    assert(!w || w->size() >= static_cast<size_t>(n) * sizeof(float));
    const rms_norm_push push{static_cast<uint32_t>(n), w ? 1u : 0u, eps};
    // Without a weight the shader never reads binding 1; x stands in for it.
    s.dispatch(s.dev().pipelines().get("rms_norm"), {&x, w ? w : &x, &y}, &push, static_cast<uint32_t>(n_tokens));
}

void rope(stream & s, const buffer & x, const buffer & pos, int64_t n_tokens, int64_t n_head, int64_t head_dim,
          const rope_params & p) {
    assert(p.n_rot > 0 && p.n_rot % 2 == 0 && p.n_rot <= head_dim);
    assert(x.size() >= static_cast<size_t>(n_tokens * n_head * head_dim) * sizeof(float));
    assert(pos.size() >= static_cast<size_t>(n_tokens) * sizeof(int32_t));
    // The same f32 power the CPU takes (kernels/ops.cpp), so the angles are its angles.
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    const rope_push push{static_cast<uint32_t>(n_tokens), static_cast<uint32_t>(n_head),
                         static_cast<uint32_t>(head_dim), static_cast<uint32_t>(p.n_rot), theta_scale, p.freq_scale};
    const char * name = p.mode == rope_mode::neox ? "rope_neox" : "rope_normal";
    s.dispatch(s.dev().pipelines().get(name), {&x, &pos}, &push, groups(p.n_rot / 2), static_cast<uint32_t>(n_head),
               static_cast<uint32_t>(n_tokens));
}

void swiglu(stream & s, const buffer & gate, const buffer & up, const buffer & y, int64_t n) {
    assert(n > 0);
    assert(gate.size() >= static_cast<size_t>(n) * sizeof(float) && up.size() >= static_cast<size_t>(n) * sizeof(float));
    assert(y.size() >= static_cast<size_t>(n) * sizeof(float));
    const swiglu_push push{static_cast<uint32_t>(n)};
    // Long vectors (512 tokens of an FFN) exceed one dimension's group limit: wrap into y.
    const uint32_t total = groups(n);
    const uint32_t gx = std::min(total, s.dev().caps().max_workgroup_count_x);
    s.dispatch(s.dev().pipelines().get("swiglu"), {&gate, &up, &y}, &push, gx, (total + gx - 1) / gx);
}

void add(stream & s, const buffer & a, const buffer & b, const buffer & y, int64_t n, int64_t n_b) {
    assert(n > 0 && n_b > 0 && n % n_b == 0);
    assert(a.size() >= static_cast<size_t>(n) * sizeof(float) && y.size() >= static_cast<size_t>(n) * sizeof(float));
    assert(b.size() >= static_cast<size_t>(n_b) * sizeof(float));
    const add_push push{static_cast<uint32_t>(n), static_cast<uint32_t>(n_b)};
    const uint32_t total = groups(n);
    const uint32_t gx = std::min(total, s.dev().caps().max_workgroup_count_x);
    s.dispatch(s.dev().pipelines().get("add"), {&a, &b, &y}, &push, gx, (total + gx - 1) / gx);
}

}  // namespace hearth::kernels::vulkan
