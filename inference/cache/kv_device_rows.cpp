#include <algorithm>
#include <tuple>

#include "inference/cache/kv_cache.h"

namespace hearth::inference {

kv_device_rows::kv_device_rows(std::shared_ptr<kernels::device_ops> ops, int32_t first, int32_t n_layer, int32_t n_ctx,
                               size_t k_row_bytes, size_t v_row_bytes)
    : ops_(std::move(ops)), first_(first), n_ctx_(n_ctx), k_row_bytes_(k_row_bytes), v_row_bytes_(v_row_bytes),
      k_(static_cast<size_t>(n_layer - first)), v_(static_cast<size_t>(n_layer - first)) {}

uint64_t kv_device_rows::bytes() const {
    return k_.size() * static_cast<uint64_t>(n_alloc_) * (k_row_bytes_ + v_row_bytes_);
}

status kv_device_rows::reserve(int32_t n) {
    if (n <= n_alloc_) return {};
    const int32_t step = kv_cache::k_grow_positions;
    const int32_t grown = std::min(n_ctx_, (n + step - 1) / step * step);
    std::vector<std::unique_ptr<kernels::device_buffer>> k(k_.size()), v(v_.size());
    for (size_t i = 0; i < k_.size(); ++i) {
        for (auto [to, from, row_bytes] : {std::tuple{&k[i], &k_[i], k_row_bytes_}, {&v[i], &v_[i], v_row_bytes_}}) {
            const size_t kept = static_cast<size_t>(n_alloc_) * row_bytes;
            auto b = ops_->make_buffer(static_cast<size_t>(grown) * row_bytes);
            if (!b) return b.error();
            if (kept > 0)
                if (status s = ops_->copy(**from, 0, **b, 0, kept); !s) return s;
            *to = std::move(*b);
        }
    }
    k_ = std::move(k);
    v_ = std::move(v);
    n_alloc_ = grown;
    return {};
}

status kv_device_rows::read(int32_t il, kv_half h, int32_t pos, int32_t n, uint8_t * dst) const {
    const size_t rb = row_bytes(h);
    return rows(il, h).download(dst, static_cast<size_t>(n) * rb, static_cast<size_t>(pos) * rb);
}

status kv_device_rows::write(int32_t il, kv_half h, int32_t pos, int32_t n, const uint8_t * src) {
    const size_t rb = row_bytes(h);
    return rows(il, h).upload(src, static_cast<size_t>(n) * rb, static_cast<size_t>(pos) * rb);
}

}  // namespace hearth::inference
