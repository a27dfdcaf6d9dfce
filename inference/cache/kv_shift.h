// kv_shift: moves runs of K/V rows of a cache to new positions, the way a chunk of a file
// that moved down or up after an edit is reused instead of evaluated again. Keys carry
// RoPE, a rotation by pos * theta per dimension pair, so a row moved by delta positions is
// rotated once more by delta * theta (rotations compose); values carry no position and are
// copied as they are. Quantized rows are dequantized, rotated and quantized again.
// The moved K/V still hold what the chunk saw before the edit (the tokens before it may
// differ now): the reuse is an approximation, measured in docs/session-cache.md.
// Thread-safety: none; the caller owns the cache.
#pragma once

#include <cstdint>
#include <span>

#include "base/result.h"
#include "inference/cache/kv_cache.h"
#include "inference/model/model.h"

namespace hearth::inference {

struct kv_move {
    int32_t src = 0;   // first position of the run before the move
    int32_t dst = 0;   // first position after it
    int32_t n = 0;     // positions in the run
};

// Applies moves whose runs are ordered and disjoint both before (src) and after (dst), as
// chunks of one document are. Every destination row must be within cache.n_alloc().
// Errors: runs out of order, overlapping, or outside the cache.
status kv_shift(kv_cache & cache, const hparams & hp, std::span<const kv_move> moves);

}  // namespace hearth::inference
