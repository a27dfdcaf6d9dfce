// kv_cache: the keys and values of one sequence, per layer, stored in the cache type
// (f32 for exact comparisons, f16 (default, below), q8_0 or q4_0). Layout per layer: K and V are
// each [n_pos][n_embd_kv] rows of the cache type, one row per position, so a position's
// row can be written once and never moved. q8_0/q4_0 need head_dim % 32 == 0, so each
// head's slice of a row is whole blocks (attention reads one head at a time).
// Storage grows in steps of k_grow_positions up to n_ctx, so a short file's slot costs
// what it holds, not the whole context.
// Thread-safety: owned by the compute worker; not shared.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kernels/tensor_type.h"

namespace hearth::inference {

// The KV cache type when none is chosen. f16, not q8_0: Qwen2-family keys reach |145| in the
// first layer, and q8_0 blocks of such keys move the default model's logits by up to 4.9
// (1 of 6 llama.cpp golden continuations kept) where f16 keeps 5 of 6 (0.38); an f16 slot of
// 4096 tokens still costs only 48 MiB on that model. q8_0 and q4_0 stay available.
inline constexpr const char * k_default_cache_type = "f16";

// Parses "f32", "f16", "q8_0", "q4_0"; the error lists the accepted names.
result<kernels::tensor_type> parse_cache_type(std::string_view name);

// Whether a cache of this type can hold heads of head_dim elements.
status check_cache_type(kernels::tensor_type type, int32_t head_dim);

// Bytes one position costs in a cache: K and V rows for every layer.
uint64_t kv_bytes_per_token(kernels::tensor_type type, int32_t n_layer, int32_t n_embd_kv);

class kv_cache {
public:
    static constexpr int32_t k_grow_positions = 256;

    kv_cache(kernels::tensor_type type, int32_t n_layer, int32_t n_embd_kv, int32_t n_ctx);

    kernels::tensor_type type() const { return type_; }
    int32_t n_ctx() const { return n_ctx_; }
    int32_t n_layer() const { return n_layer_; }
    int32_t n_embd_kv() const { return n_embd_kv_; }
    int32_t n_alloc() const { return n_alloc_; }      // positions with storage
    int32_t n_pos() const { return n_pos_; }          // positions that hold valid K/V
    size_t row_bytes() const { return row_bytes_; }   // one position of one layer, K or V
    uint64_t allocated_bytes() const;

    // Makes room for positions [0, n) (n <= n_ctx); contents of [0, n_pos) are kept.
    void reserve(int32_t n);
    // Declares positions [0, n) valid (after the forward pass wrote them) or drops the tail.
    void set_n_pos(int32_t n);
    void clear() { n_pos_ = 0; }

    uint8_t * k_row(int32_t il, int32_t pos) { return k_[il].data() + static_cast<size_t>(pos) * row_bytes_; }
    uint8_t * v_row(int32_t il, int32_t pos) { return v_[il].data() + static_cast<size_t>(pos) * row_bytes_; }
    const uint8_t * k_data(int32_t il) const { return k_[il].data(); }
    const uint8_t * v_data(int32_t il) const { return v_[il].data(); }

private:
    kernels::tensor_type type_;
    int32_t n_layer_;
    int32_t n_embd_kv_;
    int32_t n_ctx_;
    size_t row_bytes_;
    int32_t n_alloc_ = 0;   // positions allocated per layer
    int32_t n_pos_ = 0;
    std::vector<std::vector<uint8_t>> k_, v_;  // [n_layer][n_alloc * row_bytes]
};

}  // namespace hearth::inference
