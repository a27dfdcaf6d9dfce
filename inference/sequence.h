// sequence: one token sequence and the KV cache that holds it, position for position.
// prefill() keeps the longest common prefix of what the cache holds and the new prompt and
// evaluates only the rest — the reason a warm slot answers the next keystroke fast.
// Thread-safety: owned by the compute worker.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/result.h"
#include "inference/engine.h"
#include "inference/kv_cache.h"

namespace hearth::inference {

struct sequence {
    kv_cache cache;
    std::vector<token_id> tokens;   // tokens[i] is the token whose K/V sit at position i

    explicit sequence(kv_cache c) : cache(std::move(c)) {}
    void clear() { cache.clear(); tokens.clear(); }
};

struct prefill_stats {
    int32_t n_prompt = 0;
    int32_t n_reused = 0;      // positions kept from the cache
    int32_t n_evaluated = 0;   // positions computed now
    double t_ms = 0;
};

// Makes the sequence hold exactly `prompt` and leaves the logits of its last token in
// `logits`. At least the last prompt token is always evaluated (its logits are needed).
// With reuse off, the cache is cleared first (a cold evaluation).
result<prefill_stats> prefill(engine & eng, sequence & seq, std::span<const token_id> prompt,
                              std::vector<float> & logits, bool reuse = true);

// Appends one token and leaves its logits in `logits`.
status decode_one(engine & eng, sequence & seq, token_id tok, std::vector<float> & logits);

}  // namespace hearth::inference
