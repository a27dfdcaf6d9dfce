#include "inference/cache/kv_shift.h"

#include <cstring>
#include <vector>

#include "kernels/ops.h"
#include "kernels/quant.h"

namespace hearth::inference {
namespace {

// Rotates n K rows (bytes of the cache's K type) by delta positions, one layer.
void rotate_rows(const kv_cache & cache, const hparams & hp, int32_t il, uint8_t * rows, int32_t n, int32_t delta,
                 std::vector<float> & tmp, std::vector<int32_t> & pos_buf) {
    // A shift turns rows already scaled by the RoPE's attn_factor: only the angle is added.
    kernels::rope_params rope = hp.rope_for_layer(il, cache.n_ctx());
    rope.attn_factor = 1.0f;
    const int32_t width = cache.n_embd_kv();
    const size_t row_bytes = cache.row_bytes(kv_half::k);
    const kernels::tensor_type type = cache.types().k;
    tmp.resize(static_cast<size_t>(n) * width);
    pos_buf.assign(static_cast<size_t>(n), delta);
    for (int32_t t = 0; t < n; ++t)
        kernels::dequantize_row(type, rows + t * row_bytes, tmp.data() + static_cast<size_t>(t) * width, width);
    kernels::rope(tmp.data(), n, hp.n_head_kv, hp.head_dim, pos_buf.data(), rope);
    for (int32_t t = 0; t < n; ++t)
        kernels::quantize_row(type, tmp.data() + static_cast<size_t>(t) * width, rows + t * row_bytes, width);
}

struct scratch {
    std::vector<float> tmp;
    std::vector<int32_t> pos;
    std::vector<uint8_t> k, v;   // a device layer's rows on their way through the host
};

status apply(kv_cache & cache, const hparams & hp, const kv_move & m, scratch & sc) {
    const size_t k_bytes = static_cast<size_t>(m.n) * cache.row_bytes(kv_half::k);
    const size_t v_bytes = static_cast<size_t>(m.n) * cache.row_bytes(kv_half::v);
    for (int32_t il = 0; il < cache.n_layer(); ++il) {
        if (il < cache.host_layers()) {
            std::memmove(cache.k_row(il, m.dst), cache.k_row(il, m.src), k_bytes);
            std::memmove(cache.v_row(il, m.dst), cache.v_row(il, m.src), v_bytes);
            rotate_rows(cache, hp, il, cache.k_row(il, m.dst), m.n, m.dst - m.src, sc.tmp, sc.pos);
            continue;
        }
        // Rows on a device: read, rotated on the host, written back at the destination (the host
        // mirror path; docs/gpu.md measures it).
        sc.k.resize(k_bytes);
        sc.v.resize(v_bytes);
        if (status s = cache.read_rows(il, kv_half::k, m.src, m.n, sc.k.data()); !s) return s;
        if (status s = cache.read_rows(il, kv_half::v, m.src, m.n, sc.v.data()); !s) return s;
        rotate_rows(cache, hp, il, sc.k.data(), m.n, m.dst - m.src, sc.tmp, sc.pos);
        if (status s = cache.write_rows(il, kv_half::k, m.dst, m.n, sc.k.data()); !s) return s;
        if (status s = cache.write_rows(il, kv_half::v, m.dst, m.n, sc.v.data()); !s) return s;
    }
    return {};
}

}  // namespace

status kv_shift(kv_cache & cache, const hparams & hp, std::span<const kv_move> moves) {
    for (size_t i = 0; i < moves.size(); ++i) {
        const kv_move & m = moves[i];
        if (m.n <= 0 || m.src < 0 || m.dst < 0 || m.src + m.n > cache.n_alloc() || m.dst + m.n > cache.n_alloc())
            return fail("kv_shift: move ", i, " (", m.src, " -> ", m.dst, ", ", m.n, " rows) is outside the ",
                        cache.n_alloc(), " allocated positions");
        if (i > 0 && (m.src < moves[i - 1].src + moves[i - 1].n || m.dst < moves[i - 1].dst + moves[i - 1].n))
            return fail("kv_shift: move ", i, " overlaps or precedes move ", i - 1);
    }
    // A run moving right can only overwrite sources of later runs that also move right, so
    // those go first, last to first; a run moving left can only overwrite sources of earlier
    // runs that also move left, so those go first to last after them.
    scratch sc;
    for (size_t i = moves.size(); i-- > 0;)
        if (moves[i].dst > moves[i].src)
            if (status s = apply(cache, hp, moves[i], sc); !s) return s;
    for (const kv_move & m : moves)
        if (m.dst < m.src)
            if (status s = apply(cache, hp, m, sc); !s) return s;
    return {};
}

}  // namespace hearth::inference
