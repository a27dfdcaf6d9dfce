// kv_cache: the keys and values of one sequence, per layer, K and V each stored in its cache type
// (f32 for exact comparisons, f16 (default, below), q8_0 or q4_0; llama.cpp's -ctk / -ctv).
// Layout per layer: K and V are each [n_pos][n_embd_kv] rows of their type, one row per
// position, so a position's row can be written once and never moved. q8_0/q4_0 need
// head_dim % 32 == 0, so each head's slice of a row is whole blocks (attention reads one head
// at a time). A quantized K may hold keys divided by the model's scales (k_smoothed(),
// k_smoothing.h); the queries that read them take the scales too.
// Storage grows in steps of k_grow_positions up to n_ctx, so a short file's slot costs
// what it holds, not the whole context.
// The rows of the last layers may live in a device's memory instead (kv_device_rows, attached by
// the layer_device that runs those layers): the host then holds none of them, k_row/k_data are
// for host layers only, and read_rows/write_rows reach either.
// Thread-safety: owned by the compute worker; not shared.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kernels/device_ops.h"
#include "kernels/tensor_type.h"

namespace hearth::inference {

// The KV cache type when none is chosen, for K and V. f16, not q8_0: Qwen2-family keys reach
// |145| in the first layer, and q8_0 blocks of such keys move the default model's logits by up
// to 4.9 (1 of 6 llama.cpp golden continuations kept) where f16 keeps all 6; an f16 K with a
// q8_0 V keeps 5 of 6 (docs/design.md). An f16 slot of 4096 tokens still costs only 48 MiB on
// that model. The other types and pairs stay available.
inline constexpr const char * k_default_cache_type = "f16";

// The types of a cache's K and of its V.
struct kv_types {
    kernels::tensor_type k = kernels::tensor_type::f16;
    kernels::tensor_type v = kernels::tensor_type::f16;

    kv_types() = default;
    // One type for both: what every caller meant before the halves could differ.
    kv_types(kernels::tensor_type both) : k(both), v(both) {}   // NOLINT(google-explicit-constructor)
    kv_types(kernels::tensor_type k_type, kernels::tensor_type v_type) : k(k_type), v(v_type) {}
    bool operator==(const kv_types &) const = default;
};

// "f16" when both halves are that type, else "K/V": "f16/q8_0".
std::string kv_types_name(const kv_types & t);

// Parses "f32", "f16", "q8_0", "q4_0"; the error lists the accepted names.
result<kernels::tensor_type> parse_cache_type(std::string_view name);

// The types from the settings: `both` (a type, or "K/V" as kv_types_name writes it) for both
// halves, then k or v, when not empty, for that half alone (--cache-type-k / --cache-type-v).
result<kv_types> parse_cache_types(std::string_view both, std::string_view k = {}, std::string_view v = {});

// Whether a cache of these types can hold heads of head_dim elements.
status check_cache_type(kernels::tensor_type type, int32_t head_dim);
status check_cache_types(const kv_types & types, int32_t head_dim);

// Bytes one position costs in a cache: K and V rows for every layer.
uint64_t kv_bytes_per_token(const kv_types & types, int32_t n_layer, int32_t n_embd_kv);

// K or V of a cache's layer.
enum class kv_half { k, v };

// The K/V rows of layers [first_layer(), n_layer) of one cache in a device's memory: buffers of
// its device_ops, laid out as the host's ([n_alloc][row_bytes(half)] per layer and half) and grown
// in the host's steps, so a slot costs the same wherever it lives. Holds the device, so it may
// outlive the layers that made it (device/layer_device).
class kv_device_rows {
public:
    kv_device_rows(std::shared_ptr<kernels::device_ops> ops, int32_t first, int32_t n_layer, int32_t n_ctx,
                   size_t k_row_bytes, size_t v_row_bytes);

    const kernels::device_ops * owner() const { return ops_.get(); }   // the device these rows belong to
    int32_t first_layer() const { return first_; }
    int32_t n_alloc() const { return n_alloc_; }   // positions with storage
    uint64_t bytes() const;                        // device memory held
    // Makes room for positions [0, n), keeping the rows held.
    status reserve(int32_t n);
    // n rows from position pos of layer il, to or from host memory.
    status read(int32_t il, kv_half h, int32_t pos, int32_t n, uint8_t * dst) const;
    status write(int32_t il, kv_half h, int32_t pos, int32_t n, const uint8_t * src);
    // Layer il's rows of one half, for the device's operations.
    kernels::device_buffer & rows(int32_t il, kv_half h) const {
        return *(h == kv_half::k ? k_ : v_)[static_cast<size_t>(il - first_)];
    }

private:
    size_t row_bytes(kv_half h) const { return h == kv_half::k ? k_row_bytes_ : v_row_bytes_; }

    std::shared_ptr<kernels::device_ops> ops_;
    int32_t first_;
    int32_t n_ctx_;
    size_t k_row_bytes_, v_row_bytes_;
    int32_t n_alloc_ = 0;
    std::vector<std::unique_ptr<kernels::device_buffer>> k_, v_;   // [n_layer - first_]
};

class kv_cache {
public:
    static constexpr int32_t k_grow_positions = 256;

    // k_smoothed: K rows are stored divided by the model's k_smoothing scales (k_smoothing.h),
    // which whoever evaluates or saves the cache must honour.
    kv_cache(kv_types types, int32_t n_layer, int32_t n_embd_kv, int32_t n_ctx, bool k_smoothed = false);
    // A copy holds every row on the host (a device's rows read back; if that fails, the copy is
    // empty); the device adopts it when it next evaluates it.
    kv_cache(const kv_cache & other);
    kv_cache & operator=(const kv_cache & other);
    kv_cache(kv_cache &&) noexcept = default;
    kv_cache & operator=(kv_cache &&) noexcept = default;
    ~kv_cache() = default;

    const kv_types & types() const { return types_; }
    bool k_smoothed() const { return k_smoothed_; }
    int32_t n_ctx() const { return n_ctx_; }
    int32_t n_layer() const { return n_layer_; }
    int32_t n_embd_kv() const { return n_embd_kv_; }
    int32_t n_alloc() const { return n_alloc_; }      // positions with storage
    int32_t n_pos() const { return n_pos_; }          // positions that hold valid K/V
    size_t row_bytes(kv_half h) const { return h == kv_half::k ? k_row_bytes_ : v_row_bytes_; }   // one position of one layer
    uint64_t allocated_bytes() const;                 // host and device together
    uint64_t device_bytes() const { return device_ ? device_->bytes() : 0; }   // of those, on a device

    // Makes room for positions [0, n) (n <= n_ctx); contents of [0, n_pos) are kept.
    void reserve(int32_t n);
    // Declares positions [0, n) valid (after the forward pass wrote them) or drops the tail.
    void set_n_pos(int32_t n);
    void clear() { n_pos_ = 0; }

    // Host layers only (il < host_layers()).
    uint8_t * k_row(int32_t il, int32_t pos) { return host(il, k_) + static_cast<size_t>(pos) * k_row_bytes_; }
    uint8_t * v_row(int32_t il, int32_t pos) { return host(il, v_) + static_cast<size_t>(pos) * v_row_bytes_; }
    const uint8_t * k_data(int32_t il) const { return host(il, k_); }
    const uint8_t * v_data(int32_t il) const { return host(il, v_); }

    // The layers whose rows the host holds: [0, host_layers()), the rest on the device.
    int32_t host_layers() const { return device_ ? device_->first_layer() : n_layer_; }
    kv_device_rows * device_rows() { return device_.get(); }
    const kv_device_rows * device_rows() const { return device_.get(); }
    // The device's rows take over layers [rows->first_layer(), n_layer), which must already hold
    // the valid rows [0, n_pos); the host's storage of those layers is freed.
    void attach_device_rows(std::unique_ptr<kv_device_rows> rows);
    // Copies the device's rows [0, n_pos) back to host storage and drops them (the device is
    // going away). On an error the rows are lost: the cache is cleared, and says why.
    status bring_home();

    // n rows from pos of layer il wherever they live (a device's rows grow as written).
    status read_rows(int32_t il, kv_half h, int32_t pos, int32_t n, uint8_t * dst) const;
    status write_rows(int32_t il, kv_half h, int32_t pos, int32_t n, const uint8_t * src);

private:
    uint8_t * host(int32_t il, std::vector<std::vector<uint8_t>> & rows) {
        assert(il < host_layers());
        return rows[static_cast<size_t>(il)].data();
    }
    const uint8_t * host(int32_t il, const std::vector<std::vector<uint8_t>> & rows) const {
        assert(il < host_layers());
        return rows[static_cast<size_t>(il)].data();
    }

    kv_types types_;
    bool k_smoothed_;
    int32_t n_layer_;
    int32_t n_embd_kv_;
    int32_t n_ctx_;
    size_t k_row_bytes_, v_row_bytes_;
    int32_t n_alloc_ = 0;   // positions allocated per layer
    int32_t n_pos_ = 0;
    std::vector<std::vector<uint8_t>> k_, v_;  // [n_layer][n_alloc * row_bytes(half)]; empty on device layers
    std::unique_ptr<kv_device_rows> device_;   // layers [device_->first_layer(), n_layer), or none
};

}  // namespace hearth::inference
