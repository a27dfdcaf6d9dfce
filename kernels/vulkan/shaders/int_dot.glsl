// dot4(a, b): the dot product of four int8 packed in each word (byte k is element k), exact in
// int. With HEARTH_INT_DOT it is the device's integer dot product (OpSDot of
// SPV_KHR_integer_dot_product, 4x8-bit packed; the device enables shaderIntegerDotProduct);
// otherwise four scalar multiply-adds. Both give the same integer, so the products that use them
// are equal to the bit.
#if HEARTH_INT_DOT
// glslang before 14 has no GL_EXT_integer_dot_product (dotPacked4x8EXT): the instruction is named
// by its opcode (OpSDotKHR, 4450; capabilities DotProductKHR 6019 and DotProductInput4x8BitPackedKHR
// 6018; packed vector format 0 = 4x8 bit).
#extension GL_EXT_spirv_intrinsics : require
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot_packed(uint a, uint b, spirv_literal int packed_vector_format);
int dot4(uint a, uint b) { return sdot_packed(a, b, 0); }
#else
int dot4(uint a, uint b) {
    int s = 0;
    [[unroll]] for (uint k = 0u; k < 32u; k += 8u) s += (int(a << (24u - k)) >> 24) * (int(b << (24u - k)) >> 24);
    return s;
}
#endif
