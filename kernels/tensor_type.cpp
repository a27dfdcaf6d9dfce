#include "kernels/tensor_type.h"

#include <array>

namespace hearth::kernels {
namespace {

constexpr tensor_type_traits unknown{"unknown", 0, 0, false};

constexpr std::array<tensor_type_traits, 40> make_table() {
    std::array<tensor_type_traits, 40> t{};
    for (auto & e : t) e = unknown;
    t[0] = {"f32", 1, 4, true};
    t[1] = {"f16", 1, 2, true};
    t[2] = {"q4_0", 32, 18, true};
    t[3] = {"q4_1", 32, 20, true};
    t[6] = {"q5_0", 32, 22, true};
    t[7] = {"q5_1", 32, 24, true};
    t[8] = {"q8_0", 32, 34, true};
    t[9] = {"q8_1", 32, 36, true};
    t[10] = {"q2_K", 256, 84, true};
    t[11] = {"q3_K", 256, 110, true};
    t[12] = {"q4_K", 256, 144, true};
    t[13] = {"q5_K", 256, 176, true};
    t[14] = {"q6_K", 256, 210, true};
    t[15] = {"q8_K", 256, 292, true};
    t[16] = {"iq2_xxs", 256, 66, true};
    t[17] = {"iq2_xs", 256, 74, true};
    t[18] = {"iq3_xxs", 256, 98, true};
    t[19] = {"iq1_s", 256, 50, true};
    t[20] = {"iq4_nl", 32, 18, true};
    t[21] = {"iq3_s", 256, 110, true};
    t[22] = {"iq2_s", 256, 82, true};
    t[23] = {"iq4_xs", 256, 136, true};
    t[24] = {"i8", 1, 1, true};
    t[25] = {"i16", 1, 2, true};
    t[26] = {"i32", 1, 4, true};
    t[27] = {"i64", 1, 8, true};
    t[28] = {"f64", 1, 8, true};
    t[29] = {"iq1_m", 256, 56, true};
    t[30] = {"bf16", 1, 2, true};
    t[34] = {"tq1_0", 256, 54, true};
    t[35] = {"tq2_0", 256, 66, true};
    t[39] = {"mxfp4", 32, 17, true};
    return t;
}

constexpr auto k_table = make_table();

}  // namespace

const tensor_type_traits & tensor_type_info(uint32_t raw_type) {
    return raw_type < k_table.size() ? k_table[raw_type] : unknown;
}

}  // namespace hearth::kernels
