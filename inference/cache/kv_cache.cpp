#include "inference/cache/kv_cache.h"

#include <algorithm>
#include <cassert>
#include <cstring>

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

std::string kv_types_name(const kv_types & t) {
    const std::string k(kernels::tensor_type_info(t.k).name);
    return t.k == t.v ? k : k + "/" + std::string(kernels::tensor_type_info(t.v).name);
}

result<kv_types> parse_cache_types(std::string_view both, std::string_view k, std::string_view v) {
    kv_types t;
    const size_t slash = both.find('/');
    auto first = parse_cache_type(both.substr(0, slash));
    if (!first) return first.error();
    t = *first;
    if (slash != std::string_view::npos) {
        auto second = parse_cache_type(both.substr(slash + 1));
        if (!second) return fail(second.message(), " (a pair is written K/V, as f16/q8_0)");
        t.v = *second;
    }
    if (!k.empty()) {
        auto kt = parse_cache_type(k);
        if (!kt) return fail("K ", kt.message());
        t.k = *kt;
    }
    if (!v.empty()) {
        auto vt = parse_cache_type(v);
        if (!vt) return fail("V ", vt.message());
        t.v = *vt;
    }
    return t;
}

status check_cache_type(tensor_type type, int32_t head_dim) {
    const auto & info = kernels::tensor_type_info(type);
    if (head_dim % info.block_size != 0)
        return fail("cache type ", info.name, " needs a head size that is a multiple of ", info.block_size,
                    "; this model's is ", head_dim, " (use --cache-type f16)");
    return {};
}

status check_cache_types(const kv_types & types, int32_t head_dim) {
    if (status s = check_cache_type(types.k, head_dim); !s) return s;
    return check_cache_type(types.v, head_dim);
}

uint64_t kv_bytes_per_token(const kv_types & types, int32_t n_layer, int32_t n_embd_kv) {
    return static_cast<uint64_t>(n_layer) * (kernels::row_size(types.k, n_embd_kv) + kernels::row_size(types.v, n_embd_kv));
}

kv_cache::kv_cache(kv_types types, int32_t n_layer, int32_t n_embd_kv, int32_t n_ctx, bool k_smoothed)
    : types_(types), k_smoothed_(k_smoothed), n_layer_(n_layer), n_embd_kv_(n_embd_kv), n_ctx_(n_ctx),
      k_row_bytes_(kernels::row_size(types.k, n_embd_kv)), v_row_bytes_(kernels::row_size(types.v, n_embd_kv)),
      k_(n_layer), v_(n_layer) {}

kv_cache::kv_cache(const kv_cache & o)
    : types_(o.types_), k_smoothed_(o.k_smoothed_), n_layer_(o.n_layer_), n_embd_kv_(o.n_embd_kv_), n_ctx_(o.n_ctx_), k_row_bytes_(o.k_row_bytes_),
      v_row_bytes_(o.v_row_bytes_), n_alloc_(o.n_alloc_), n_pos_(o.n_pos_), k_(o.k_), v_(o.v_) {
    if (!o.device_) return;
    for (int32_t il = o.device_->first_layer(); il < n_layer_; ++il) {
        auto & k = k_[static_cast<size_t>(il)];
        auto & v = v_[static_cast<size_t>(il)];
        k.resize(static_cast<size_t>(n_alloc_) * k_row_bytes_);
        v.resize(static_cast<size_t>(n_alloc_) * v_row_bytes_);
        if (n_pos_ > 0 && (!o.device_->read(il, kv_half::k, 0, n_pos_, k.data()) ||
                           !o.device_->read(il, kv_half::v, 0, n_pos_, v.data())))
            n_pos_ = 0;
    }
}

kv_cache & kv_cache::operator=(const kv_cache & o) {
    if (this != &o) *this = kv_cache(o);
    return *this;
}

uint64_t kv_cache::allocated_bytes() const {
    return static_cast<uint64_t>(host_layers()) * static_cast<uint64_t>(n_alloc_) * (k_row_bytes_ + v_row_bytes_) +
           device_bytes();
}

void kv_cache::reserve(int32_t n) {
    assert(n <= n_ctx_);
    if (n <= n_alloc_) return;
    const int32_t grown = std::min(n_ctx_, (n + k_grow_positions - 1) / k_grow_positions * k_grow_positions);
    // Device layers grow when the device next writes them (kv_device_rows::reserve can fail).
    for (int32_t il = 0; il < host_layers(); ++il) {
        k_[il].resize(static_cast<size_t>(grown) * k_row_bytes_);
        v_[il].resize(static_cast<size_t>(grown) * v_row_bytes_);
    }
    n_alloc_ = grown;
}

void kv_cache::set_n_pos(int32_t n) {
    assert(n >= 0 && n <= n_alloc_);
    n_pos_ = n;
}

void kv_cache::attach_device_rows(std::unique_ptr<kv_device_rows> rows) {
    assert(!device_ && rows && rows->first_layer() >= 0 && rows->first_layer() < n_layer_);
    for (int32_t il = rows->first_layer(); il < n_layer_; ++il) {
        std::vector<uint8_t>().swap(k_[static_cast<size_t>(il)]);
        std::vector<uint8_t>().swap(v_[static_cast<size_t>(il)]);
    }
    device_ = std::move(rows);
}

status kv_cache::bring_home() {
    if (!device_) return {};
    std::unique_ptr<kv_device_rows> rows = std::move(device_);
    status s;
    for (int32_t il = rows->first_layer(); il < n_layer_; ++il) {
        auto & k = k_[static_cast<size_t>(il)];
        auto & v = v_[static_cast<size_t>(il)];
        k.resize(static_cast<size_t>(n_alloc_) * k_row_bytes_);
        v.resize(static_cast<size_t>(n_alloc_) * v_row_bytes_);
        if (!s) continue;
        s = rows->read(il, kv_half::k, 0, n_pos_, k.data());
        if (s) s = rows->read(il, kv_half::v, 0, n_pos_, v.data());
    }
    if (!s) {
        n_pos_ = 0;
        return fail("the device's KV rows could not be read back (", s.message(), "); the cache was cleared");
    }
    return {};
}

status kv_cache::read_rows(int32_t il, kv_half h, int32_t pos, int32_t n, uint8_t * dst) const {
    assert(pos >= 0 && n >= 0 && pos + n <= n_alloc_);
    if (il >= host_layers()) return device_->read(il, h, pos, n, dst);
    const auto & rows = h == kv_half::k ? k_ : v_;
    const size_t row_bytes = this->row_bytes(h);
    std::memcpy(dst, rows[static_cast<size_t>(il)].data() + static_cast<size_t>(pos) * row_bytes,
                static_cast<size_t>(n) * row_bytes);
    return {};
}

status kv_cache::write_rows(int32_t il, kv_half h, int32_t pos, int32_t n, const uint8_t * src) {
    assert(pos >= 0 && n >= 0 && pos + n <= n_alloc_);
    if (il >= host_layers()) {
        if (status s = device_->reserve(n_alloc_); !s) return s;
        return device_->write(il, h, pos, n, src);
    }
    auto & rows = h == kv_half::k ? k_ : v_;
    const size_t row_bytes = this->row_bytes(h);
    std::memcpy(rows[static_cast<size_t>(il)].data() + static_cast<size_t>(pos) * row_bytes, src,
                static_cast<size_t>(n) * row_bytes);
    return {};
}

}  // namespace hearth::inference
