// The mixture-of-experts operations besides the expert products (matmul.cpp): the router and the
// weighted sum of the picks.
#include <algorithm>
#include <cassert>

#include "kernels/vulkan/buffer.h"
#include "kernels/vulkan/device.h"
#include "kernels/vulkan/ops.h"
#include "kernels/vulkan/pipelines.h"
#include "kernels/vulkan/push_constants.h"
#include "kernels/vulkan/stream.h"

namespace hearth::kernels::vulkan {
namespace {

constexpr uint32_t k_wg = 64;

// n invocations in groups of 64, wrapped into y past one dimension's group limit.
void dispatch_wrapped(stream & s, const char * op, std::initializer_list<const buffer *> buffers, const void * push,
                      int64_t n) {
    const auto total = static_cast<uint32_t>((n + k_wg - 1) / k_wg);
    const uint32_t gx = std::min(total, s.dev().caps().max_workgroup_count_x);
    s.dispatch(s.dev().pipelines().get(op), buffers, push, gx, (total + gx - 1) / gx);
}

}  // namespace

void moe_route(stream & s, const buffer & logits, const buffer & ids, const buffer & weights, int64_t n_tokens,
               int64_t n_expert, int64_t n_used) {
    assert(n_tokens > 0 && n_used > 0 && n_used <= n_expert);
    assert(logits.size() >= static_cast<size_t>(n_tokens * n_expert) * sizeof(float));
    assert(ids.size() >= static_cast<size_t>(n_tokens * n_used) * sizeof(int32_t));
    assert(weights.size() >= static_cast<size_t>(n_tokens * n_used) * sizeof(float));
    const moe_route_push push{static_cast<uint32_t>(n_tokens), static_cast<uint32_t>(n_expert),
                              static_cast<uint32_t>(n_used)};
    dispatch_wrapped(s, "moe_route", {&logits, &ids, &weights}, &push, n_tokens);
}

void moe_combine(stream & s, const buffer & x, const buffer & weights, const buffer & y, int64_t n_tokens,
                 int64_t n_used, int64_t n) {
    assert(n_tokens > 0 && n_used > 0 && n > 0);
    assert(x.size() >= static_cast<size_t>(n_tokens * n_used * n) * sizeof(float));
    assert(weights.size() >= static_cast<size_t>(n_tokens * n_used) * sizeof(float));
    assert(y.size() >= static_cast<size_t>(n_tokens * n) * sizeof(float));
    const moe_combine_push push{static_cast<uint32_t>(n_tokens), static_cast<uint32_t>(n_used),
                                static_cast<uint32_t>(n)};
    dispatch_wrapped(s, "moe_combine", {&x, &weights, &y}, &push, n_tokens * n);
}

}  // namespace hearth::kernels::vulkan
