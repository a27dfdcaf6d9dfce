#include "kernels/vulkan/pipelines.h"

#include <cassert>
#include <vector>

#include "kernels/vulkan/device.h"
#include "kernels/vulkan/push_constants.h"
#include "kernels/vulkan/shaders.h"

namespace hearth::kernels::vulkan {
namespace {

struct op_spec {
    const char * name;
    uint32_t n_buffers;
    uint32_t push_bytes;
    bool has_subgroup_variant;
    bool has_f64_variant = false;   // sums the CPU takes in double (<name>_f64, preferred where the device has it)
    bool has_idot_variant = false;  // integer sums (<name>[_subgroup]_idot, where the device uses integer dot products)
};

constexpr op_spec k_ops[] = {
    {"dequant_q8_0", 2, sizeof(dequant_push), false},
    {"dequant_q4_0", 2, sizeof(dequant_push), false},
    {"dequant_f32", 2, sizeof(dequant_push), false},
    {"dequant_q5_0", 2, sizeof(dequant_push), false},
    {"dequant_q4_k", 2, sizeof(dequant_push), false},
    {"dequant_q6_k", 2, sizeof(dequant_push), false},
    {"dequant_f16", 2, sizeof(dequant_push), false},
    {"matmul_q8_0", 3, sizeof(matmul_push), true, false, true},
    {"matmul_q4_0", 3, sizeof(matmul_push), true, false, true},
    {"matmul_f32", 3, sizeof(matmul_push), true},
    {"matmul_q5_0", 3, sizeof(matmul_push), true, false, true},
    {"matmul_q4_k", 3, sizeof(matmul_push), true, false, true},
    {"matmul_q6_k", 3, sizeof(matmul_push), true, false, true},
    {"matmul_f16", 3, sizeof(matmul_push), true, true},
    {"matmul_experts_q8_0", 4, sizeof(matmul_experts_push), true, false, true},
    {"matmul_experts_q4_0", 4, sizeof(matmul_experts_push), true, false, true},
    {"matmul_experts_f32", 4, sizeof(matmul_experts_push), true},
    {"matmul_experts_q5_0", 4, sizeof(matmul_experts_push), true, false, true},
    {"matmul_experts_q4_k", 4, sizeof(matmul_experts_push), true, false, true},
    {"matmul_experts_q6_k", 4, sizeof(matmul_experts_push), true, false, true},
    {"matmul_experts_f16", 4, sizeof(matmul_experts_push), true, true},
    {"rms_norm", 3, sizeof(rms_norm_push), true, true},
    {"layer_norm", 4, sizeof(layer_norm_push), true, true},
    {"rope_normal", 3, sizeof(rope_push), false},
    {"rope_neox", 3, sizeof(rope_push), false},
    {"swiglu", 3, sizeof(swiglu_push), false},
    {"silu", 2, sizeof(elementwise_push), false},
    {"gelu", 3, sizeof(elementwise_push), false},
    {"add", 3, sizeof(binary_push), false},
    {"mul", 3, sizeof(binary_push), false},
    {"scale", 1, sizeof(scale_push), false},
    {"moe_route", 3, sizeof(moe_route_push), false, true},
    {"moe_combine", 3, sizeof(moe_combine_push), false},
    {"quantize_q8_0", 2, sizeof(quantize_push), false},
    {"quantize_q8_k", 2, sizeof(quantize_push), false},
    {"kv_append_f16", 2, sizeof(kv_append_push), false},
    {"kv_append_q8_0", 2, sizeof(kv_append_push), false},
    {"kv_append_q4_0", 2, sizeof(kv_append_push), false},
    {"attention_f16_f16", 7, sizeof(attention_push), true},
    {"attention_f16_q8_0", 7, sizeof(attention_push), true},
    {"attention_f16_q4_0", 7, sizeof(attention_push), true},
    {"attention_q8_0_f16", 7, sizeof(attention_push), true},
    {"attention_q8_0_q8_0", 7, sizeof(attention_push), true},
    {"attention_q8_0_q4_0", 7, sizeof(attention_push), true},
    {"attention_q4_0_f16", 7, sizeof(attention_push), true},
    {"attention_q4_0_q8_0", 7, sizeof(attention_push), true},
    {"attention_q4_0_q4_0", 7, sizeof(attention_push), true},
};

void destroy(VkDevice d, pipeline & p) {
    if (p.handle) vkDestroyPipeline(d, p.handle, nullptr);
    if (p.layout) vkDestroyPipelineLayout(d, p.layout, nullptr);
    if (p.set_layout) vkDestroyDescriptorSetLayout(d, p.set_layout, nullptr);
}

status build(VkDevice d, std::span<const uint32_t> words, uint32_t n_buffers, uint32_t push_bytes, pipeline & p) {
    p.n_buffers = n_buffers;
    p.push_bytes = push_bytes;
    std::vector<VkDescriptorSetLayoutBinding> bindings(n_buffers);
    for (uint32_t i = 0; i < n_buffers; ++i) {
        bindings[i].binding = i;
        bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        bindings[i].descriptorCount = 1;
        bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dli.bindingCount = n_buffers;
    dli.pBindings = bindings.data();
    if (status s = vk_check(vkCreateDescriptorSetLayout(d, &dli, nullptr, &p.set_layout), "vkCreateDescriptorSetLayout"); !s)
        return s;
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &p.set_layout;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &range;
    if (status s = vk_check(vkCreatePipelineLayout(d, &pli, nullptr, &p.layout), "vkCreatePipelineLayout"); !s)
        return s;
    VkShaderModuleCreateInfo mci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mci.codeSize = words.size_bytes();
    mci.pCode = words.data();
    VkShaderModule module = VK_NULL_HANDLE;
    if (status s = vk_check(vkCreateShaderModule(d, &mci, nullptr, &module), "vkCreateShaderModule"); !s) return s;
    VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = module;
    cpi.stage.pName = "main";
    cpi.layout = p.layout;
    const VkResult r = vkCreateComputePipelines(d, VK_NULL_HANDLE, 1, &cpi, nullptr, &p.handle);
    vkDestroyShaderModule(d, module, nullptr);
    return vk_check(r, "vkCreateComputePipelines");
}

}  // namespace

result<std::unique_ptr<pipeline_set>> pipeline_set::create(const device & dev) {
    std::unique_ptr<pipeline_set> set(new pipeline_set(dev.handle()));
    for (const op_spec & op : k_ops) {
        std::string shader = op.name;
        if (op.has_subgroup_variant && dev.uses_subgroup()) shader += "_subgroup";
        // The sums the CPU takes in double, in double where the device has it: its result to the bit.
        if (op.has_f64_variant && dev.caps().shader_float64) shader = std::string(op.name) + "_f64";
        if (op.has_idot_variant && dev.uses_integer_dot()) shader += "_idot";
        const auto words = find_shader(shader);
        if (words.empty()) return fail("no embedded shader '", shader, "'");
        pipeline & p = set->pipelines_[op.name];
        if (status s = build(dev.handle(), words, op.n_buffers, op.push_bytes, p); !s)
            return fail("shader '", shader, "': ", s.message());
    }
    return set;
}

pipeline_set::~pipeline_set() {
    for (auto & [name, p] : pipelines_) destroy(device_, p);
}

const pipeline & pipeline_set::get(std::string_view op) const {
    const auto it = pipelines_.find(op);
    assert(it != pipelines_.end());
    return it->second;
}

}  // namespace hearth::kernels::vulkan
