// device_ops: the operations of a transformer layer on a compute device, as one interface each
// GPU backend implements (kernels/vulkan/device_ops.h, kernels/cuda/device_ops.h), so the layer
// graph over them (inference/graph/layer_graph, run by inference/device/layer_device) is written once. Operations are queued in order and
// run by finish(); buffers are the backend's own behind device_buffer. Each operation matches the
// CPU kernel of the same name within the tolerances docs/gpu.md states per backend.
// Invariants: every buffer passed to an operation was made by the same device_ops' make_buffer
// (implementations downcast to their own buffer type); shapes as the backends' ops.h say.
// Thread-safety: one owner (the engine's compute worker); buffers are used by that owner only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "base/result.h"
#include "kernels/attention_shape.h"
#include "kernels/ops.h"
#include "kernels/tensor_type.h"

namespace hearth::kernels {

// Device memory of a fixed size. upload returns once src may be reused, download once the bytes
// are in dst; both wait for nothing queued (call them outside a batch's operations or after finish()).
class device_buffer {
public:
    virtual ~device_buffer() = default;
    virtual size_t size() const = 0;
    virtual status upload(const void * src, size_t bytes, size_t offset = 0) = 0;
    virtual status download(void * dst, size_t bytes, size_t offset = 0) const = 0;
};

// A backend's own buffer type B (size, upload, download of these signatures) behind
// device_buffer; the backend downcasts with backend_buffer<B>::of.
template <class B>
class backend_buffer final : public device_buffer {
public:
    explicit backend_buffer(B b) : b_(std::move(b)) {}
    size_t size() const override { return b_.size(); }
    status upload(const void * src, size_t bytes, size_t offset = 0) override { return b_.upload(src, bytes, offset); }
    status download(void * dst, size_t bytes, size_t offset = 0) const override { return b_.download(dst, bytes, offset); }
    // Every buffer an operation gets was made by the same device_ops' make_buffer (the invariant above).
    static B & of(device_buffer & b) { return static_cast<backend_buffer &>(b).b_; }
    static const B & of(const device_buffer & b) { return static_cast<const backend_buffer &>(b).b_; }

private:
    B b_;
};

// A weight matrix in a buffer of type B, laid out as on the CPU: n_rows rows of n_cols elements,
// row r at byte r * row_bytes. The backends' own operations take it over their buffer type.
template <class B>
struct weight_in {
    const B * data;
    tensor_type type;
    int64_t n_rows;
    int64_t n_cols;
    size_t row_bytes;
};
using device_weight = weight_in<device_buffer>;

// A device a backend could open, as `hearth devices` lists it (before anything is built on it).
struct device_summary {
    std::string name;               // "llvmpipe (LLVM 15.0.6, 256 bits)", "NVIDIA H100 80GB HBM3"
    bool cpu = false;               // the CPU behind a GPU API (lavapipe, SwiftShader): `auto` never takes it
    uint64_t memory_bytes = 0;      // its largest device-local heap, or its memory
};

class device_ops {
public:
    virtual ~device_ops() = default;

    // "vulkan: llvmpipe (LLVM 15.0.6, 256 bits)", "cuda: NVIDIA H200 (sm_90)"
    virtual const std::string & name() const = 0;
    // The device memory a placement plans within: the largest device-local heap, or what was free
    // when the device was opened.
    virtual uint64_t memory_bytes() const = 0;
    // Whether the device is the CPU itself behind a GPU API (lavapipe, SwiftShader): correct but
    // slower than the CPU kernels, so `--gpu-layers auto` never chooses one (N and all still do).
    virtual bool is_cpu() const = 0;

    // Whether matmul and matmul_experts take weights of this type (quantized rows of whole 32-element
    // blocks; f16 and f32 rows of any length).
    virtual bool supports_weight(tensor_type t) const = 0;

    virtual result<std::unique_ptr<device_buffer>> make_buffer(size_t bytes) = 0;
    // A read-only buffer over host memory [data, data + bytes) that the device reads where it is
    // (a weight in the mapped model file), where the device shares memory with the host and can
    // import it: no copy, no second resident set. nullptr where it cannot (the caller copies with
    // make_buffer); the memory must outlive the buffer unchanged, and nothing may upload to it.
    virtual std::unique_ptr<device_buffer> import_host(const void * data, size_t bytes) {
        (void)data;
        (void)bytes;
        return nullptr;
    }
    // Copies bytes between two buffers on the device, now (not queued): growing a cache.
    virtual status copy(const device_buffer & src, size_t src_offset, device_buffer & dst, size_t dst_offset,
                        size_t bytes) = 0;

    // Whether products with this weight type take their activations quantized to q8_0 (x_q8 of
    // matmul, made by quantize_q8_0), and the bytes of that form.
    virtual bool takes_q8_0_activations(tensor_type t) const = 0;
    virtual size_t q8_0_activation_bytes(int64_t n_tokens, int64_t n_cols) const = 0;
    virtual void quantize_q8_0(const device_buffer & x, const device_buffer & x_q8, int64_t n_tokens, int64_t n_cols) = 0;
    // y[t][r] = w row r . x[t]
    virtual void matmul(const device_weight & w, const device_buffer & x, const device_buffer & y, int64_t n_tokens,
                        const device_buffer * x_q8) = 0;

    // Rows of n (n_tokens of them; head norms pass n_tokens * n_head rows of head_dim): RMS norm
    // times w, or LayerNorm times w plus b (w, b: [n]; null: none). y may be x.
    virtual void rms_norm(const device_buffer & x, const device_buffer * w, const device_buffer & y, int64_t n_tokens,
                          int64_t n, float eps) = 0;
    virtual void layer_norm(const device_buffer & x, const device_buffer * w, const device_buffer * b,
                            const device_buffer & y, int64_t n_tokens, int64_t n, float eps) = 0;
    // Rotates x in place as kernels::rope; p.freq_factors (a host pointer) is ignored: freq_factors
    // is the same [p.n_rot / 2] on the device, or null for none. p.attn_factor is applied.
    virtual void rope(const device_buffer & x, const device_buffer & pos, int64_t n_tokens, int64_t n_head,
                      int64_t head_dim, const rope_params & p, const device_buffer * freq_factors) = 0;
    // Activations over n elements, as kernels:: of the same names (y may be the input).
    virtual void swiglu(const device_buffer & gate, const device_buffer & up, const device_buffer & y, int64_t n) = 0;
    virtual void silu(const device_buffer & x, const device_buffer & y, int64_t n) = 0;
    virtual void gelu(const device_buffer & x, const device_buffer & y, int64_t n) = 0;
    // y[i] = a[i] + b[i % n_b] and y[i] = a[i] * b[i % n_b] over n elements (n a multiple of n_b;
    // y may be a): n_b = n element by element, n_b = a row's width for a vector over every row.
    virtual void add(const device_buffer & a, const device_buffer & b, const device_buffer & y, int64_t n,
                     int64_t n_b) = 0;
    virtual void mul(const device_buffer & a, const device_buffer & b, const device_buffer & y, int64_t n,
                     int64_t n_b) = 0;
    // x[i] *= s over n elements, in place.
    virtual void scale(const device_buffer & x, float s, int64_t n) = 0;

    // A mixture of experts, as inference/graph/moe.cpp computes it on the CPU.
    // Router: logits [n_tokens][n_expert] (f32); per token the softmax's top n_used experts, best
    // first (ties to the lower id), into ids [n_tokens][n_used] (int32), and their probabilities
    // divided by their sum (in double, clamped below at 6.103515625e-5) into weights [n_tokens][n_used].
    virtual void moe_route(const device_buffer & logits, const device_buffer & ids, const device_buffer & weights,
                           int64_t n_tokens, int64_t n_expert, int64_t n_used) = 0;
    // Expert products: y[t][j] ([n_tokens][n_used][expert_rows]) = rows [e * expert_rows, (e + 1) *
    // expert_rows) of the stacked w, e = ids[t][j], times x[t] (x [n_tokens][w.n_cols]) or, with
    // x_per_pick, times x[t][j] (x [n_tokens][n_used][w.n_cols]). x_q8 as for matmul (the q8_0
    // form of x as quantize_q8_0 made it over all its rows).
    virtual void matmul_experts(const device_weight & w, int64_t expert_rows, const device_buffer & x, bool x_per_pick,
                                const device_buffer & ids, const device_buffer & y, int64_t n_tokens, int64_t n_used,
                                const device_buffer * x_q8) = 0;
    // y[t] = sum over j in order of weights[t][j] * x[t][j]: x [n_tokens][n_used][n], y [n_tokens][n].
    virtual void moe_combine(const device_buffer & x, const device_buffer & weights, const device_buffer & y,
                             int64_t n_tokens, int64_t n_used, int64_t n) = 0;

    // Whether the cache operations take K or V rows of n_embd_kv values in this type (a layer
    // whose cache they do not take runs on the CPU).
    virtual bool takes_cache(tensor_type t, int64_t n_embd_kv) const = 0;
    // Rows src[t] (f32) into a cache of `type` at positions first_pos + t, the bytes quantize_row
    // writes (rows of row_size(type, n_embd_kv) bytes).
    virtual void kv_append(tensor_type type, const device_buffer & src, const device_buffer & cache, int32_t first_pos,
                           int64_t n_tokens, int64_t n_embd_kv) = 0;
    // attention() over K rows in k_type and V rows in v_type.
    virtual void attention(tensor_type k_type, tensor_type v_type, const device_buffer & q, const device_buffer & k,
                           const device_buffer & v, const device_buffer & n_kv, const device_buffer & kv_start,
                           const device_buffer & scores, const device_buffer & out, const attention_shape & shape) = 0;

    // Runs everything queued and waits for it; the first error.
    virtual status finish() = 0;
};

}  // namespace hearth::kernels
