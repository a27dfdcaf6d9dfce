// session_cache: one KV slot (a sequence) per key — a document URI, or a chat conversation —
// under a memory budget. A slot keeps what it evaluated last, so the next request for the same
// key only evaluates the tokens after the longest common prefix. When making room for a
// request would pass the budget, the least recently used other slots are evicted; the slot
// being served is never evicted, and a request that alone would pass the budget is refused.
// Thread-safety: owned by the compute worker. stats() is a copy the owner may publish.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include "base/result.h"
#include "inference/engine.h"
#include "inference/sequence.h"

namespace hearth::inference {

struct session_cache_stats {
    int32_t n_slots = 0;
    uint64_t budget_bytes = 0;
    uint64_t used_bytes = 0;     // allocated by every slot
    int64_t tokens_held = 0;     // valid positions over every slot
    uint64_t n_requests = 0;
    uint64_t n_hits = 0;         // requests that found their slot
    uint64_t n_evictions = 0;
    uint64_t tokens_reused = 0;  // positions kept by prefill over all requests
    uint64_t tokens_evaluated = 0;
};

class session_cache {
public:
    session_cache(const engine & eng, kernels::tensor_type cache_type, int32_t n_ctx, uint64_t budget_bytes);

    // The slot for `key`, made ready to hold n_positions positions: created if absent, made
    // most recently used, its storage reserved, and other slots evicted (least recently used
    // first) as the budget needs. The pointer stays valid until the next acquire() or erase().
    result<sequence *> acquire(const std::string & key, int32_t n_positions);

    // Records what a prefill on an acquired slot did (for the hit-rate statistics).
    void record(const prefill_stats & st);

    void erase(const std::string & key);
    bool contains(const std::string & key) const { return slots_.count(key) != 0; }
    // Keys from most to least recently used.
    std::vector<std::string> keys_by_recency() const;

    session_cache_stats stats() const;
    uint64_t bytes_for_positions(int32_t n_positions) const;

private:
    struct slot {
        std::unique_ptr<sequence> seq;
        std::list<std::string>::iterator lru_it;
    };

    const engine & eng_;
    kernels::tensor_type type_;
    int32_t n_ctx_;
    uint64_t budget_;
    std::unordered_map<std::string, slot> slots_;
    std::list<std::string> lru_;  // front: most recently used
    session_cache_stats counters_;
};

}  // namespace hearth::inference
