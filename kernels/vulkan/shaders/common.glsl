// Shared helpers: f16 <-> f32 by their bit patterns (exactly as kernels/fp16.h converts, so no
// driver's rounding or denormal mode enters), and workgroup sums and maxima that use subgroup
// arithmetic where the build asks for it (HEARTH_SUBGROUP) and shared memory otherwise.
#extension GL_EXT_control_flow_attributes : enable
#if HEARTH_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#endif

float half_to_float(uint h) {
    const uint sign = (h & 0x8000u) << 16;
    const uint e = (h >> 10) & 0x1fu;
    const uint m = h & 0x3ffu;
    if (e == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
    if (e != 0u) return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
    precise float mag = float(m) * 5.9604644775390625e-8;   // m * 2^-24, exact in f32
    return uintBitsToFloat(sign | floatBitsToUint(mag));
}

uint float_to_half(float f) {   // round to nearest even; NaN keeps its top payload bits
    const uint x = floatBitsToUint(f);
    const uint sign = (x >> 16) & 0x8000u;
    const uint ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) {
        uint m = (ax & 0x7fffffu) >> 13;
        if (m == 0u) m = 1u;
        return sign | 0x7c00u | m;
    }
    if (ax >= 0x477ff000u) return sign | 0x7c00u;
    if (ax < 0x38800000u) {
        if (ax <= 0x33000000u) return sign;
        const uint e = ax >> 23;
        const uint m = (ax & 0x7fffffu) | 0x800000u;
        const uint shift = 126u - e;
        uint q = m >> shift;
        const uint rem = m & ((1u << shift) - 1u);
        const uint half_ = 1u << (shift - 1u);
        if (rem > half_ || (rem == half_ && (q & 1u) != 0u)) ++q;
        return sign | q;
    }
    const uint r = ax + 0xfffu + ((ax >> 13) & 1u) - (112u << 23);
    return sign | (r >> 13);
}

// a / b rounded to nearest, as the CPU's division rounds it: Vulkan lets a device's division be
// 2.5 ulp off (lavapipe's is exact; GPUs' often are not), and a quantization's scale must be the
// CPU's to the bit. Of the quotient and its 3 neighbours either side, the one whose remainder
// a - q * b is least is the rounded quotient; the remainders are exact (Dekker's product, every
// step precise so nothing is fused). No overflow, underflow or division by zero.
float remainder_exact(float a, float b, float q) {
    precise float qs = q * 4097.0;   // Veltkamp: q = qh + ql, b = bh + bl, 12 bits each
    precise float qh = qs - (qs - q);
    precise float ql = q - qh;
    precise float bs = b * 4097.0;
    precise float bh = bs - (bs - b);
    precise float bl = b - bh;
    precise float prod = q * b;
    precise float err = ((qh * bh - prod) + qh * bl + ql * bh) + ql * bl;   // q * b - prod, exact
    precise float r = (a - prod) - err;
    return r;
}
float div_rn(float a, float b) {
    precise float q0 = a / b;
    float best = q0;
    float best_r = abs(remainder_exact(a, b, q0));
    for (int k = -3; k <= 3; ++k) {
        if (k == 0) continue;
        const float q = uintBitsToFloat(uint(int(floatBitsToUint(q0)) + k));
        const float r = abs(remainder_exact(a, b, q));
        if (r < best_r) {
            best = q;
            best_r = r;
        }
    }
    return best;
}

// exp(x) as the CPU's SiLU takes it (kernels/ops_simd.cpp exp_ggml): the same polynomial, fma for
// fma, so where the device fuses fma() (lavapipe does) the result is the CPU's bit for bit.
float pow2i(int n) { return uintBitsToFloat(uint(n + 127) << 23); }   // -126 <= n <= 127
float exp_ggml(float x) {
    const float r = 12582912.0;   // 0x1.8p23: adding it rounds to an integer
    precise float z = fma(x, 1.4426950216293335, r);
    precise float n = z - r;
    precise float b = fma(-n, 1.428606765330187e-06, fma(-n, 0.693145751953125, x));
    precise float u = b * b;
    precise float j = fma(fma(fma(0.008247390389442444, b, 0.04189976677298546), u,
                              fma(0.16668395698070526, b, 0.4999912679195404)),
                          u, fma(0.9999994039535522, b, 1.0));
    if (!(abs(n) <= 192.0)) {
        if (abs(n) > 192.0) return n <= 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);
        return j * n;
    }
    const int ni = int(n);
    const int k2 = ni > 127 ? ni - 127 : (ni < -126 ? -100 : 0);
    precise float v = (j * pow2i(ni - k2)) * pow2i(k2);
    return v;
}

// Workgroup reductions over WG_SIZE invocations (the caller's local_size_x). Every invocation
// calls them (they contain barriers) and every invocation gets the result.
shared float red_scratch[WG_SIZE];

float workgroup_sum(float v) {
#if HEARTH_SUBGROUP
    v = subgroupAdd(v);
    barrier();
    if (subgroupElect()) red_scratch[gl_SubgroupID] = v;
    barrier();
    float s = 0.0;
    for (uint i = 0u; i < gl_NumSubgroups; ++i) s += red_scratch[i];
    barrier();
    return s;
#else
    red_scratch[gl_LocalInvocationID.x] = v;
    barrier();
    [[unroll]] for (uint step = WG_SIZE / 2u; step > 0u; step >>= 1) {
        if (gl_LocalInvocationID.x < step)
            red_scratch[gl_LocalInvocationID.x] += red_scratch[gl_LocalInvocationID.x + step];
        barrier();
    }
    const float s = red_scratch[0];
    barrier();
    return s;
#endif
}

float workgroup_max(float v) {
#if HEARTH_SUBGROUP
    v = subgroupMax(v);
    barrier();
    if (subgroupElect()) red_scratch[gl_SubgroupID] = v;
    barrier();
    float s = red_scratch[0];
    for (uint i = 1u; i < gl_NumSubgroups; ++i) s = max(s, red_scratch[i]);
    barrier();
    return s;
#else
    red_scratch[gl_LocalInvocationID.x] = v;
    barrier();
    [[unroll]] for (uint step = WG_SIZE / 2u; step > 0u; step >>= 1) {
        if (gl_LocalInvocationID.x < step)
            red_scratch[gl_LocalInvocationID.x] = max(red_scratch[gl_LocalInvocationID.x],
                                                      red_scratch[gl_LocalInvocationID.x + step]);
        barrier();
    }
    const float s = red_scratch[0];
    barrier();
    return s;
#endif
}

#if HEARTH_F64
// The same in double (shared memory only), for the sums the CPU takes in double.
shared double red_scratch64[WG_SIZE];
double workgroup_sum_f64(double v) {
    red_scratch64[gl_LocalInvocationID.x] = v;
    barrier();
    [[unroll]] for (uint step = WG_SIZE / 2u; step > 0u; step >>= 1) {
        if (gl_LocalInvocationID.x < step)
            red_scratch64[gl_LocalInvocationID.x] += red_scratch64[gl_LocalInvocationID.x + step];
        barrier();
    }
    const double s = red_scratch64[0];
    barrier();
    return s;
}
#endif
