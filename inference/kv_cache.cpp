#include "inference/kv_cache.h"

#include <algorithm>
#include <cassert>

#include "kernels/quant.h"

namespace hearth::inference {

using kernels::tensor_type;

result<tensor_type> parse_cache_type(std::string_view name) {
    if (name == "f32") return tensor_type::f32;
    if (name == "f16") return tensor_type::f16;
    if (name == "q8_0") return tensor_type::q8_0;
    if (name == "q4_0") return tensor_type::q4_0;
    return fail("cache type '", std::string(name), "' is not one of f32, f16, q8_0, q4_0");
}

status check_cache_type(tensor_type type, int32_t head_dim) {
    const auto & info = kernels::tensor_type_info(type);
    if (head_dim % info.block_size != 0)
        return fail("cache type ", info.name, " needs a head size that is a multiple of ", info.block_size,
                    "; this model's is ", head_dim, " (use --cache-type f16)");
    return {};
}

uint64_t kv_bytes_per_token(tensor_type type, int32_t n_layer, int32_t n_embd_kv) {
    return 2ull * static_cast<uint64_t>(n_layer) * kernels::row_size(type, n_embd_kv);
}

kv_cache::kv_cache(tensor_type type, int32_t n_layer, int32_t n_embd_kv, int32_t n_ctx)
    : type_(type), n_layer_(n_layer), n_embd_kv_(n_embd_kv), n_ctx_(n_ctx),
      row_bytes_(kernels::row_size(type, n_embd_kv)), k_(n_layer), v_(n_layer) {}

uint64_t kv_cache::allocated_bytes() const {
    return 2ull * static_cast<uint64_t>(n_layer_) * static_cast<uint64_t>(n_alloc_) * row_bytes_;
}

void kv_cache::reserve(int32_t n) {
    assert(n <= n_ctx_);
    if (n <= n_alloc_) return;
    const int32_t grown = std::min(n_ctx_, (n + k_grow_positions - 1) / k_grow_positions * k_grow_positions);
    for (int32_t il = 0; il < n_layer_; ++il) {
        k_[il].resize(static_cast<size_t>(grown) * row_bytes_);
        v_[il].resize(static_cast<size_t>(grown) * row_bytes_);
    }
    n_alloc_ = grown;
}

void kv_cache::set_n_pos(int32_t n) {
    assert(n >= 0 && n <= n_alloc_);
    n_pos_ = n;
}

}  // namespace hearth::inference
