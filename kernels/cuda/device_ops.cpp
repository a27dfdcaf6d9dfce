#include "kernels/cuda/device_ops.h"

#include <algorithm>
#include <string>
#include <utility>

#include "kernels/cuda/device.h"
#include "kernels/cuda/ops.h"

namespace hearth::kernels::cuda {
namespace {

using cuda_buffer = backend_buffer<buffer>;
const buffer & cu(const device_buffer & b) { return cuda_buffer::of(b); }
const buffer * opt(const device_buffer * b) { return b ? &cu(*b) : nullptr; }   // an optional operand
weight_buffer weight_of(const device_weight & w) { return {&cu(*w.data), w.type, w.n_rows, w.n_cols, w.row_bytes}; }

class cuda_ops final : public device_ops {
public:
    explicit cuda_ops(std::unique_ptr<device> dev) : dev_(std::move(dev)) {
        const device_info & info = dev_->info();
        name_ = "cuda: " + info.name + " (sm_" + std::to_string(info.cc_major) + std::to_string(info.cc_minor) + ")";
    }

    const std::string & name() const override { return name_; }
    uint64_t memory_bytes() const override { return dev_->info().free_bytes; }
    bool is_cpu() const override { return false; }   // a CUDA device is always a GPU

    result<std::unique_ptr<device_buffer>> make_buffer(size_t bytes) override {
        auto b = buffer::create(*dev_, std::max<size_t>(bytes, 4));
        if (!b) return b.error();
        return std::unique_ptr<device_buffer>(new cuda_buffer(std::move(*b)));
    }
    status copy(const device_buffer & src, size_t src_offset, device_buffer & dst, size_t dst_offset,
                size_t bytes) override {
        return cuda_buffer::of(dst).copy_from(cu(src), src_offset, dst_offset, bytes);
    }

    bool supports_weight(tensor_type t) const override { return cuda::supports_weight(t); }
    bool takes_q8_0_activations(tensor_type t) const override { return cuda::takes_q8_0_activations(t); }
    size_t q8_0_activation_bytes(int64_t n_tokens, int64_t n_cols) const override {
        return cuda::q8_0_activation_bytes(n_tokens, n_cols);
    }
    void quantize_q8_0(const device_buffer & x, const device_buffer & x_q8, int64_t n_tokens, int64_t n_cols) override {
        cuda::quantize_q8_0(cu(x), cu(x_q8), n_tokens, n_cols);
    }
    void matmul(const device_weight & w, const device_buffer & x, const device_buffer & y, int64_t n_tokens,
                const device_buffer * x_q8) override {
        cuda::matmul(weight_of(w), cu(x), cu(y), n_tokens, opt(x_q8));
    }
    void rms_norm(const device_buffer & x, const device_buffer * w, const device_buffer & y, int64_t n_tokens, int64_t n,
                  float eps) override {
        cuda::rms_norm(cu(x), opt(w), cu(y), n_tokens, n, eps);
    }
    void layer_norm(const device_buffer & x, const device_buffer * w, const device_buffer * b, const device_buffer & y,
                    int64_t n_tokens, int64_t n, float eps) override {
        cuda::layer_norm(cu(x), opt(w), opt(b), cu(y), n_tokens, n, eps);
    }
    void rope(const device_buffer & x, const device_buffer & pos, int64_t n_tokens, int64_t n_head, int64_t head_dim,
              const rope_params & p, const device_buffer * freq_factors) override {
        cuda::rope(cu(x), cu(pos), n_tokens, n_head, head_dim, p, opt(freq_factors));
    }
    void swiglu(const device_buffer & gate, const device_buffer & up, const device_buffer & y, int64_t n) override {
        cuda::swiglu(cu(gate), cu(up), cu(y), n);
    }
    void silu(const device_buffer & x, const device_buffer & y, int64_t n) override { cuda::silu(cu(x), cu(y), n); }
    void gelu(const device_buffer & x, const device_buffer & y, int64_t n) override { cuda::gelu(cu(x), cu(y), n); }
    void add(const device_buffer & a, const device_buffer & b, const device_buffer & y, int64_t n, int64_t n_b) override {
        cuda::add(cu(a), cu(b), cu(y), n, n_b);
    }
    void mul(const device_buffer & a, const device_buffer & b, const device_buffer & y, int64_t n, int64_t n_b) override {
        cuda::mul(cu(a), cu(b), cu(y), n, n_b);
    }
    void scale(const device_buffer & x, float s, int64_t n) override { cuda::scale(cu(x), s, n); }

    void moe_route(const device_buffer & logits, const device_buffer & ids, const device_buffer & weights,
                   int64_t n_tokens, int64_t n_expert, int64_t n_used) override {
        cuda::moe_route(cu(logits), cu(ids), cu(weights), n_tokens, n_expert, n_used);
    }
    void matmul_experts(const device_weight & w, int64_t expert_rows, const device_buffer & x, bool x_per_pick,
                        const device_buffer & ids, const device_buffer & y, int64_t n_tokens, int64_t n_used,
                        const device_buffer * x_q8) override {
        cuda::matmul_experts(weight_of(w), expert_rows, cu(x), x_per_pick, cu(ids), cu(y), n_tokens, n_used, opt(x_q8));
    }
    void moe_combine(const device_buffer & x, const device_buffer & weights, const device_buffer & y, int64_t n_tokens,
                     int64_t n_used, int64_t n) override {
        cuda::moe_combine(cu(x), cu(weights), cu(y), n_tokens, n_used, n);
    }

    bool takes_cache(tensor_type t, int64_t n_embd_kv) const override { return cuda::takes_cache(t, n_embd_kv); }
    void kv_append(tensor_type type, const device_buffer & src, const device_buffer & cache, int32_t first_pos,
                   int64_t n_tokens, int64_t n_embd_kv) override {
        cuda::kv_append(type, cu(src), cu(cache), first_pos, n_tokens, n_embd_kv);
    }
    void attention(tensor_type k_type, tensor_type v_type, const device_buffer & q, const device_buffer & k,
                   const device_buffer & v, const device_buffer & n_kv, const device_buffer & kv_start,
                   const device_buffer & scores, const device_buffer & out, const attention_shape & sh) override {
        cuda::attention(k_type, v_type, cu(q), cu(k), cu(v), cu(n_kv), cu(kv_start), cu(scores), cu(out), sh);
    }

    status finish() override { return dev_->finish(); }

private:
    std::unique_ptr<device> dev_;
    std::string name_;
};

}  // namespace

result<std::unique_ptr<device_ops>> make_device_ops() {
    auto dev = device::create();
    if (!dev) return dev.error();
    return std::unique_ptr<device_ops>(new cuda_ops(std::move(*dev)));
}

result<std::vector<device_summary>> list_devices() { return device::list(); }

}  // namespace hearth::kernels::cuda
