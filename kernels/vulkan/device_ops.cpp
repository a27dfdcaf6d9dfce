#include "kernels/vulkan/device_ops.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/vulkan/buffer.h"
#include "kernels/vulkan/ops.h"
#include "kernels/vulkan/stream.h"

namespace hearth::kernels::vulkan {
namespace {

using vulkan_buffer = backend_buffer<buffer>;
const buffer & vk(const device_buffer & b) { return vulkan_buffer::of(b); }

class vulkan_ops final : public device_ops {
public:
    vulkan_ops(std::unique_ptr<device> dev, stream s, buffer gelu_table)
        : dev_(std::move(dev)),
          stream_(std::move(s)),
          gelu_table_(std::move(gelu_table)),
          name_("vulkan: " + dev_->caps().name) {}

    const std::string & name() const override { return name_; }
    uint64_t memory_bytes() const override { return dev_->caps().device_local_bytes; }
    bool is_cpu() const override { return dev_->caps().type == VK_PHYSICAL_DEVICE_TYPE_CPU; }

    std::unique_ptr<device_buffer> import_host(const void * data, size_t bytes) override {
        auto b = buffer::import_host(*dev_, data, bytes);
        if (!b) return nullptr;   // no import here (a discrete GPU, no extension, the driver refused): copied
        return std::unique_ptr<device_buffer>(new vulkan_buffer(std::move(*b)));
    }
    result<std::unique_ptr<device_buffer>> make_buffer(size_t bytes) override {
        auto b = buffer::create(*dev_, std::max<size_t>(bytes, 4));
        if (!b) return b.error();
        return std::unique_ptr<device_buffer>(new vulkan_buffer(std::move(*b)));
    }
    status copy(const device_buffer & src, size_t src_offset, device_buffer & dst, size_t dst_offset,
                size_t bytes) override {
        return vulkan_buffer::of(dst).copy_from(vk(src), src_offset, dst_offset, bytes);
    }

    bool supports_weight(tensor_type t) const override { return vulkan::supports_weight(t); }
    bool takes_q8_0_activations(tensor_type t) const override { return vulkan::takes_q8_0_activations(t); }
    size_t q8_0_activation_bytes(int64_t n_tokens, int64_t n_cols) const override {
        return vulkan::q8_0_activation_bytes(n_tokens, n_cols);
    }
    void quantize_q8_0(const device_buffer & x, const device_buffer & x_q8, int64_t n_tokens, int64_t n_cols) override {
        vulkan::quantize_q8_0(stream_, vk(x), vk(x_q8), n_tokens, n_cols);
    }
    void matmul(const device_weight & w, const device_buffer & x, const device_buffer & y, int64_t n_tokens,
                const device_buffer * x_q8) override {
        const weight_buffer wb{&vk(*w.data), w.type, w.n_rows, w.n_cols, w.row_bytes};
        const buffer * q8 = vulkan::takes_q8_k_activations(w.type) ? q8_k_for(vk(x), n_tokens, w.n_cols)
                            : x_q8                                  ? &vk(*x_q8)
                                                                    : nullptr;
        if (vulkan::takes_q8_k_activations(w.type) && !q8) return;   // no memory: finish() reports it
        vulkan::matmul(stream_, wb, vk(x), vk(y), n_tokens, q8);
    }
    void rms_norm(const device_buffer & x, const device_buffer * w, const device_buffer & y, int64_t n_tokens, int64_t n,
                  float eps) override {
        vulkan::rms_norm(stream_, vk(x), w ? &vk(*w) : nullptr, vk(y), n_tokens, n, eps);
    }
    void layer_norm(const device_buffer & x, const device_buffer * w, const device_buffer * b, const device_buffer & y,
                    int64_t n_tokens, int64_t n, float eps) override {
        vulkan::layer_norm(stream_, vk(x), w ? &vk(*w) : nullptr, b ? &vk(*b) : nullptr, vk(y), n_tokens, n, eps);
    }
    void rope(const device_buffer & x, const device_buffer & pos, int64_t n_tokens, int64_t n_head, int64_t head_dim,
              const rope_params & p, const device_buffer * freq_factors) override {
        vulkan::rope(stream_, vk(x), vk(pos), n_tokens, n_head, head_dim, p, freq_factors ? &vk(*freq_factors) : nullptr);
    }
    void swiglu(const device_buffer & gate, const device_buffer & up, const device_buffer & y, int64_t n) override {
        vulkan::swiglu(stream_, vk(gate), vk(up), vk(y), n);
    }
    void silu(const device_buffer & x, const device_buffer & y, int64_t n) override {
        vulkan::silu(stream_, vk(x), vk(y), n);
    }
    void gelu(const device_buffer & x, const device_buffer & y, int64_t n) override {
        vulkan::gelu(stream_, vk(x), gelu_table_, vk(y), n);
    }
    void add(const device_buffer & a, const device_buffer & b, const device_buffer & y, int64_t n, int64_t n_b) override {
        vulkan::add(stream_, vk(a), vk(b), vk(y), n, n_b);
    }
    void mul(const device_buffer & a, const device_buffer & b, const device_buffer & y, int64_t n, int64_t n_b) override {
        vulkan::mul(stream_, vk(a), vk(b), vk(y), n, n_b);
    }
    void scale(const device_buffer & x, float s, int64_t n) override { vulkan::scale(stream_, vk(x), s, n); }

    void moe_route(const device_buffer & logits, const device_buffer & ids, const device_buffer & weights,
                   int64_t n_tokens, int64_t n_expert, int64_t n_used) override {
        vulkan::moe_route(stream_, vk(logits), vk(ids), vk(weights), n_tokens, n_expert, n_used);
    }
    void matmul_experts(const device_weight & w, int64_t expert_rows, const device_buffer & x, bool x_per_pick,
                        const device_buffer & ids, const device_buffer & y, int64_t n_tokens, int64_t n_used,
                        const device_buffer * x_q8) override {
        const weight_buffer wb{&vk(*w.data), w.type, w.n_rows, w.n_cols, w.row_bytes};
        const buffer * q8 = vulkan::takes_q8_k_activations(w.type)
                                ? q8_k_for(vk(x), x_per_pick ? n_tokens * n_used : n_tokens, w.n_cols)
                            : x_q8 ? &vk(*x_q8)
                                   : nullptr;
        if (vulkan::takes_q8_k_activations(w.type) && !q8) return;   // no memory: finish() reports it
        vulkan::matmul_experts(stream_, wb, expert_rows, vk(x), x_per_pick, vk(ids), vk(y), n_tokens, n_used, q8);
    }
    void moe_combine(const device_buffer & x, const device_buffer & weights, const device_buffer & y, int64_t n_tokens,
                     int64_t n_used, int64_t n) override {
        vulkan::moe_combine(stream_, vk(x), vk(weights), vk(y), n_tokens, n_used, n);
    }
    bool takes_cache(tensor_type t, int64_t n_embd_kv) const override { return vulkan::supports_cache(t, n_embd_kv); }
    void kv_append(tensor_type type, const device_buffer & src, const device_buffer & cache, int32_t first_pos,
                   int64_t n_tokens, int64_t n_embd_kv) override {
        vulkan::kv_append(stream_, type, vk(src), vk(cache), first_pos, n_tokens, n_embd_kv);
    }
    void attention(tensor_type k_type, tensor_type v_type, const device_buffer & q, const device_buffer & k,
                   const device_buffer & v, const device_buffer & n_kv, const device_buffer & kv_start,
                   const device_buffer & scores, const device_buffer & out, const attention_shape & sh) override {
        vulkan::attention(stream_, k_type, v_type, vk(q), vk(k), vk(v), vk(n_kv), vk(kv_start), vk(scores), vk(out), sh);
    }

    status finish() override {
        status s = stream_.finish();
        retired_.clear();
        q8_k_of_ = {};
        if (s && !q8_k_error_.empty()) s = fail(q8_k_error_);
        q8_k_error_.clear();
        return s;
    }

private:
    // The q8_K form of x's first n_rows rows (n_cols each), for a K-quant product: quantized into
    // the backend's own scratch buffer, so the interface's activation form (q8_0) stays the only one
    // its callers make. Consecutive products of the same x (Q, K and V; gate and up) share one
    // quantization: nothing was recorded since the last one, so x is unchanged. Null where the
    // scratch cannot grow (the error is finish()'s).
    const buffer * q8_k_for(const buffer & x, int64_t n_rows, int64_t n_cols) {
        const q8_k_key key{x.handle(), n_rows, n_cols, stream_.dispatches()};
        if (q8_k_ && key == q8_k_of_) {
            ++q8_k_of_.dispatches;   // this product too
            return &*q8_k_;
        }
        const size_t bytes = vulkan::q8_k_activation_bytes(n_rows, n_cols);
        if (!q8_k_ || q8_k_->size() < bytes) {
            auto b = buffer::create(*dev_, bytes);
            if (!b) {
                if (q8_k_error_.empty()) q8_k_error_ = "the q8_K activations' scratch buffer: " + b.message();
                return nullptr;
            }
            // A dispatch recorded earlier in this batch may still read the old one.
            if (q8_k_) retired_.push_back(std::move(*q8_k_));
            q8_k_.emplace(std::move(*b));
        }
        vulkan::quantize_q8_k(stream_, x, *q8_k_, n_rows, n_cols);
        // The product that follows is recorded next: the same x at this count is still this one.
        q8_k_of_ = {x.handle(), n_rows, n_cols, stream_.dispatches() + 1};
        return &*q8_k_;
    }

    struct q8_k_key {
        VkBuffer x = VK_NULL_HANDLE;
        int64_t n_rows = 0;
        int64_t n_cols = 0;
        uint32_t dispatches = 0;   // the stream's count after the product that read it
        bool operator==(const q8_k_key &) const = default;
    };

    std::unique_ptr<device> dev_;
    stream stream_;
    buffer gelu_table_;   // make_gelu_table: gelu() reads the CPU's table
    std::string name_;
    std::optional<buffer> q8_k_;    // the K-quant products' q8_K activations (q8_k_for)
    q8_k_key q8_k_of_;              // what q8_k_ holds, and until which dispatch count
    std::vector<buffer> retired_;   // outgrown scratch buffers, kept until finish()
    std::string q8_k_error_;
};

}  // namespace

result<std::unique_ptr<device_ops>> make_device_ops(const device_options & options) {
    device_options opts = options;
    // HEARTH_VULKAN_INTEGER_DOT=0: the scalar integer sums even where the device has integer dot
    // products (the same results; a check, or a way around a driver's fault).
    if (const char * env = std::getenv("HEARTH_VULKAN_INTEGER_DOT"); env && std::strcmp(env, "0") == 0)
        opts.allow_integer_dot = false;
    // HEARTH_VULKAN_IMPORT_HOST=0: weights copied even where the device shares the host's memory
    // (to measure both).
    if (const char * env = std::getenv("HEARTH_VULKAN_IMPORT_HOST"); env && std::strcmp(env, "0") == 0)
        opts.import_host = false;
    auto dev = device::create(opts);
    if (!dev) return fail(options.cpu_device_ok ? "no Vulkan device: " : "no Vulkan GPU: ", dev.message());
    auto st = stream::create(**dev);
    if (!st) return st.error();
    auto gelu_table = make_gelu_table(**dev);
    if (!gelu_table) return gelu_table.error();
    return std::unique_ptr<device_ops>(new vulkan_ops(std::move(*dev), std::move(*st), std::move(*gelu_table)));
}

result<std::vector<device_summary>> list_devices() { return device::list(); }

}  // namespace hearth::kernels::vulkan
