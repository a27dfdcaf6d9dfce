// The weight products and the decoding check: dequantize(), matmul() and the experts' products
// (matmul_experts()) for each weight type, and the activations' q8_0 and q8_K forms.
#include <algorithm>
#include <cassert>
#include <string>

#include "kernels/quant.h"
#include "kernels/vulkan/buffer.h"
#include "kernels/vulkan/device.h"
#include "kernels/vulkan/ops.h"
#include "kernels/vulkan/pipelines.h"
#include "kernels/vulkan/push_constants.h"
#include "kernels/vulkan/stream.h"

namespace hearth::kernels::vulkan {
namespace {

constexpr uint32_t k_wg = 64;
constexpr uint32_t k_tokens_per_group = 8;   // matmul.comp's TOKENS

const char * type_suffix(tensor_type t) {
    switch (t) {
        case tensor_type::q8_0: return "q8_0";
        case tensor_type::q4_0: return "q4_0";
        case tensor_type::f32: return "f32";
        case tensor_type::q5_0: return "q5_0";
        case tensor_type::q4_k: return "q4_k";
        case tensor_type::q6_k: return "q6_k";
        case tensor_type::f16: return "f16";
        default: return nullptr;
    }
}

void check_weight(const weight_buffer & w) {
    assert(supports_weight(w.type));
    // Quantized rows are whole 32-element chunks; f16 and f32 rows may have a tail.
    const bool plain = w.type == tensor_type::f16 || w.type == tensor_type::f32;
    assert(w.n_cols > 0 && (plain || w.n_cols % 32 == 0) && w.n_cols % tensor_type_info(w.type).block_size == 0);
    assert(w.row_bytes % (w.type == tensor_type::f32 ? 4 : 2) == 0 && w.row_bytes >= row_size(w.type, w.n_cols));
    (void)plain;
    assert(static_cast<size_t>(w.n_rows - 1) * w.row_bytes + row_size(w.type, w.n_cols) <= w.data->size());
    (void)w;
}

}  // namespace

bool supports_weight(tensor_type t) { return type_suffix(t) != nullptr; }

bool takes_q8_0_activations(tensor_type t) {
    return t == tensor_type::q8_0 || t == tensor_type::q4_0 || t == tensor_type::q5_0;
}

size_t q8_0_activation_bytes(int64_t n_tokens, int64_t n_cols) {
    return static_cast<size_t>(n_tokens * (n_cols / 32)) * 9 * sizeof(uint32_t);
}

bool takes_q8_k_activations(tensor_type t) { return t == tensor_type::q4_k || t == tensor_type::q6_k; }

size_t q8_k_activation_bytes(int64_t n_tokens, int64_t n_cols) {
    return static_cast<size_t>(n_tokens) * row_size(tensor_type::q8_k, n_cols);
}

// The bytes of the quantized activations a product with this weight type reads (asserts only).
[[maybe_unused]] static size_t activation_bytes(tensor_type t, int64_t n_tokens, int64_t n_cols) {
    return takes_q8_k_activations(t) ? q8_k_activation_bytes(n_tokens, n_cols) : q8_0_activation_bytes(n_tokens, n_cols);
}

void quantize_q8_0(stream & s, const buffer & x, const buffer & x_q8, int64_t n_tokens, int64_t n_cols) {
    assert(n_tokens > 0 && n_cols > 0 && n_cols % 32 == 0);
    assert(x.size() >= static_cast<size_t>(n_tokens * n_cols) * sizeof(float));
    assert(x_q8.size() >= q8_0_activation_bytes(n_tokens, n_cols));
    const uint32_t n_blocks = static_cast<uint32_t>(n_tokens * n_cols / 32);
    const quantize_push push{n_blocks};
    const uint32_t total = (n_blocks + k_wg - 1) / k_wg;
    const uint32_t gx = std::min(total, s.dev().caps().max_workgroup_count_x);
    s.dispatch(s.dev().pipelines().get("quantize_q8_0"), {&x, &x_q8}, &push, gx, (total + gx - 1) / gx);
}

void quantize_q8_k(stream & s, const buffer & x, const buffer & x_q8, int64_t n_tokens, int64_t n_cols) {
    assert(n_tokens > 0 && n_cols > 0 && n_cols % 256 == 0);
    assert(x.size() >= static_cast<size_t>(n_tokens * n_cols) * sizeof(float));
    assert(x_q8.size() >= q8_k_activation_bytes(n_tokens, n_cols));
    const uint32_t n_blocks = static_cast<uint32_t>(n_tokens * n_cols / 256);   // a workgroup each
    const quantize_push push{n_blocks};
    const uint32_t gx = std::min(n_blocks, s.dev().caps().max_workgroup_count_x);
    s.dispatch(s.dev().pipelines().get("quantize_q8_k"), {&x, &x_q8}, &push, gx, (n_blocks + gx - 1) / gx);
}

void dequantize(stream & s, const weight_buffer & w, const buffer & out) {
    check_weight(w);
    assert(out.size() >= static_cast<size_t>(w.n_rows * w.n_cols) * sizeof(float));
    const dequant_push push{static_cast<uint32_t>(w.n_rows), static_cast<uint32_t>(w.n_cols),
                            static_cast<uint32_t>(w.row_bytes)};
    const uint32_t n_chunks = static_cast<uint32_t>((w.n_cols + 31) / 32);   // with a plain type's tail
    const pipeline & p = s.dev().pipelines().get(std::string("dequant_") + type_suffix(w.type));
    s.dispatch(p, {w.data, &out}, &push, (n_chunks + k_wg - 1) / k_wg, static_cast<uint32_t>(w.n_rows));
}

void matmul(stream & s, const weight_buffer & w, const buffer & x, const buffer & y, int64_t n_tokens,
            const buffer * x_q8) {
    check_weight(w);
    assert(n_tokens > 0);
    assert(x.size() >= static_cast<size_t>(n_tokens * w.n_cols) * sizeof(float));
    const bool q8 = takes_q8_0_activations(w.type) || takes_q8_k_activations(w.type);
    assert(!q8 || (x_q8 && x_q8->size() >= activation_bytes(w.type, n_tokens, w.n_cols)));
    assert(y.size() >= static_cast<size_t>(n_tokens * w.n_rows) * sizeof(float));
    // Rows spread over x and y so that a vocabulary-sized output stays within the group limits.
    const uint32_t rows = static_cast<uint32_t>(w.n_rows);
    const uint32_t groups_x = std::min(rows, s.dev().caps().max_workgroup_count_x);
    const uint32_t groups_y = (rows + groups_x - 1) / groups_x;
    const uint32_t groups_z = static_cast<uint32_t>((n_tokens + k_tokens_per_group - 1) / k_tokens_per_group);
    const matmul_push push{rows, static_cast<uint32_t>(w.n_cols), static_cast<uint32_t>(w.row_bytes),
                           static_cast<uint32_t>(n_tokens), groups_x};
    const pipeline & p = s.dev().pipelines().get(std::string("matmul_") + type_suffix(w.type));
    s.dispatch(p, {w.data, q8 ? x_q8 : &x, &y}, &push, groups_x, groups_y, groups_z);
}

void matmul_experts(stream & s, const weight_buffer & w, int64_t expert_rows, const buffer & x, bool x_per_pick,
                    const buffer & ids, const buffer & y, int64_t n_tokens, int64_t n_used, const buffer * x_q8) {
    check_weight(w);
    assert(n_tokens > 0 && n_used > 0 && expert_rows > 0 && w.n_rows % expert_rows == 0);
    const int64_t n_picks = n_tokens * n_used;
    const int64_t x_rows = x_per_pick ? n_picks : n_tokens;
    assert(x.size() >= static_cast<size_t>(x_rows * w.n_cols) * sizeof(float));
    const bool q8 = takes_q8_0_activations(w.type) || takes_q8_k_activations(w.type);
    assert(!q8 || (x_q8 && x_q8->size() >= activation_bytes(w.type, x_rows, w.n_cols)));
    assert(ids.size() >= static_cast<size_t>(n_picks) * sizeof(int32_t));
    assert(y.size() >= static_cast<size_t>(n_picks * expert_rows) * sizeof(float));
    (void)x_rows;
    // A pick a workgroup along z: the picks of a batch take different experts, so there is no
    // weight row to share between them as matmul() shares one between a block of tokens.
    const uint32_t rows = static_cast<uint32_t>(expert_rows);
    const uint32_t groups_x = std::min(rows, s.dev().caps().max_workgroup_count_x);
    const uint32_t groups_y = (rows + groups_x - 1) / groups_x;
    const matmul_experts_push push{rows,
                                   static_cast<uint32_t>(w.n_cols),
                                   static_cast<uint32_t>(w.row_bytes),
                                   static_cast<uint32_t>(n_picks),
                                   groups_x,
                                   static_cast<uint32_t>(n_used),
                                   x_per_pick ? 1u : 0u};
    const pipeline & p = s.dev().pipelines().get(std::string("matmul_experts_") + type_suffix(w.type));
    s.dispatch(p, {w.data, q8 ? x_q8 : &x, &y, &ids}, &push, groups_x, groups_y, static_cast<uint32_t>(n_picks));
}

}  // namespace hearth::kernels::vulkan
