// sequence: one token sequence and the KV cache that holds it, position for position.
// prefill() keeps the longest common prefix of what the cache holds and the new prompt and
// evaluates only the rest — the reason a warm slot answers the next keystroke fast. With
// chunk reuse on, runs of at least chunk_min old tokens that reappear later in the new
// prompt (the text below an edit) are moved to their new positions (kv_shift) instead of
// evaluated; only the tokens between and after them are. That is an approximation (a moved
// chunk keeps K/V computed with the old text before it), so it is a switch.
// Thread-safety: owned by the compute worker.
#pragma once

#include <cstdint>
#include <span>
#include <stop_token>
#include <vector>

#include "base/result.h"
#include "inference/cache/kv_cache.h"
#include "inference/forward/engine.h"

namespace hearth::inference {

struct sequence {
    kv_cache cache;
    std::vector<token_id> tokens;   // tokens[i] is the token whose K/V sit at position i
    // The leading positions whose K/V a prefill computed in a batch of two or more tokens. A
    // decode step computes its token alone, which sums attention in llama.cpp's one-token order
    // (attention.h): prefill re-evaluates such positions, so that what it leaves is bit for bit
    // what a cold evaluation of the prompt gives.
    int32_t n_batch_rows = 0;

    explicit sequence(kv_cache c) : cache(std::move(c)) {}
    void clear() { cache.clear(); tokens.clear(); n_batch_rows = 0; }
};

struct prefill_options {
    bool reuse = true;       // keep the common prefix; off: a cold evaluation
    int32_t chunk_min = 0;   // > 0: also reuse moved runs of at least this many tokens
    std::stop_token stop;    // requested: the evaluation stops within a layer (engine::eval)
    // >= 0: moved runs end at or before this prompt position. A FIM prompt's cursor (its
    // suffix token): the rows after it were computed for the text then before the cursor, and
    // moved behind typed text they make the model answer for the old line.
    int32_t chunk_end = -1;
};

// The chunk length the daemon uses when chunk reuse is on (docs/session-cache.md).
inline constexpr int32_t k_default_chunk_min = 64;

struct prefill_stats {
    int32_t n_prompt = 0;
    int32_t n_reused = 0;      // positions kept from the cache (prefix and moved chunks)
    int32_t n_shifted = 0;     // of those, positions moved from elsewhere (chunk reuse)
    int32_t n_chunks = 0;      // chunks moved
    int32_t n_evaluated = 0;   // positions computed now
    double t_ms = 0;
    bool stopped = false;      // opts.stop was requested: the sequence holds a prefix, no logits
};

// A run of old tokens [src, src + n) found again at [dst, dst + n) of a new prompt.
struct token_chunk {
    int32_t src = 0, dst = 0, n = 0;
};

// How many leading tokens a and b share.
size_t common_prefix(std::span<const token_id> a, std::span<const token_id> b);

// The chunks prefill would move: after the common prefix `from`, runs of at least chunk_min
// tokens of `old_tokens` that reappear in `prompt`, in order in both, never reaching the
// prompt's last token (its logits must be computed) nor past `end` (prefill_options::chunk_end;
// negative: no limit). Greedy, first match first.
std::vector<token_chunk> find_chunks(std::span<const token_id> old_tokens, std::span<const token_id> prompt, size_t from,
                                     int32_t chunk_min, int32_t end = -1);

// Makes the sequence hold exactly `prompt` and leaves the logits of its last token in
// `logits`. At least the last two prompt tokens are always evaluated, as one batch (the last
// one's logits are needed, and a lone token would be summed in the one-token order), and
// positions computed by decode steps are never kept (see sequence::n_batch_rows).
// With reuse off, the cache is cleared first (a cold evaluation). On an error the sequence
// is left empty or holding a prefix of the prompt, never inconsistent. Stopped (opts.stop),
// it returns at once with `stopped` set and the sequence holding the prefix evaluated so
// far, which the next prefill of the same document reuses.
result<prefill_stats> prefill(engine & eng, sequence & seq, std::span<const token_id> prompt,
                              std::vector<float> & logits, const prefill_options & opts);
inline result<prefill_stats> prefill(engine & eng, sequence & seq, std::span<const token_id> prompt,
                                     std::vector<float> & logits, bool reuse = true) {
    return prefill(eng, seq, prompt, logits, prefill_options{reuse, 0, {}});
}

// Appends one token and leaves its logits in `logits`. `stop` requested: an error, checked
// between layers, with the sequence unchanged.
status decode_one(engine & eng, sequence & seq, token_id tok, std::vector<float> & logits, std::stop_token stop = {});

}  // namespace hearth::inference
