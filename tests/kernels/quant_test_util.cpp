#include "tests/kernels/quant_test_util.h"

#include <cstring>

#include "kernels/blocks.h"
#include "kernels/fp16.h"

namespace hearth::kernels::test {
namespace {

struct scale_field {
    size_t offset;
    float lo, hi;   // the f16 value is drawn uniformly from [lo, hi), sign random when lo < 0
};

// The f16 scale fields of each type that only random bytes can produce (no quantizer here).
std::vector<scale_field> scale_fields(tensor_type t) {
    switch (t) {
    case tensor_type::q4_1: return {{0, 1e-3f, 0.05f}, {2, -0.5f, 0.5f}};
    case tensor_type::q5_0: return {{0, -0.05f, 0.05f}};
    case tensor_type::q5_1: return {{0, 1e-3f, 0.05f}, {2, -0.5f, 0.5f}};
    case tensor_type::iq4_nl: return {{0, -0.01f, 0.01f}};
    case tensor_type::q2_k: return {{80, 1e-3f, 0.05f}, {82, 0.0f, 0.02f}};
    case tensor_type::q3_k: return {{108, -0.01f, 0.01f}};
    case tensor_type::q4_k: return {{0, 1e-3f, 0.02f}, {2, 0.0f, 0.01f}};
    case tensor_type::q5_k: return {{0, 1e-3f, 0.02f}, {2, 0.0f, 0.01f}};
    case tensor_type::q6_k: return {{208, -0.01f, 0.01f}};
    case tensor_type::iq4_xs: return {{0, -0.01f, 0.01f}};
    default: return {};
    }
}

}  // namespace

std::vector<uint8_t> random_weight_row(tensor_type t, int64_t n, uint32_t seed) {
    const auto & info = tensor_type_info(t);
    std::vector<uint8_t> row(row_size(t, n));
    const auto & scalar = cpu::quant_kernels_for(cpu::isa::scalar);
    if (scalar[t].quantize_row) {
        const auto x = random_floats(n, seed);
        scalar[t].quantize_row(x.data(), row.data(), n);
        return row;
    }
    std::mt19937 rng(seed);
    for (auto & b : row) b = static_cast<uint8_t>(rng());
    const auto fields = scale_fields(t);
    for (int64_t b = 0; b < n / info.block_size; ++b) {
        for (const auto & f : fields) {
            std::uniform_real_distribution<float> dist(f.lo < 0 ? 0.1f * -f.lo : f.lo, f.lo < 0 ? -f.lo : f.hi);
            float v = dist(rng);
            if (f.lo < 0 && (rng() & 1)) v = -v;
            const uint16_t h = fp32_to_fp16(v);
            std::memcpy(row.data() + b * info.type_size + f.offset, &h, sizeof h);
        }
    }
    return row;
}

std::vector<uint8_t> random_activation_row(tensor_type t, int64_t n, uint32_t seed) {
    const tensor_type at = cpu::quant_kernels_for(cpu::isa::scalar)[t].vec_dot_type;
    std::vector<uint8_t> row(row_size(at, n));
    const auto x = random_floats(n, seed);
    cpu::quant_kernels_for(cpu::isa::scalar)[at].quantize_row(x.data(), row.data(), n);
    return row;
}

}  // namespace hearth::kernels::test
