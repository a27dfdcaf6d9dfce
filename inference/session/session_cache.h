// session_cache: one KV slot (a sequence) per key — a document URI, or a chat conversation —
// under a memory budget. A slot keeps what it evaluated last, so the next request for the same
// key only evaluates the tokens after the longest common prefix. When making room for a
// request would pass the budget, the least recently used other slots are evicted; the slot
// being served is never evicted, and a request that alone would pass the budget is refused.
// With a slot_store attached, an evicted slot is written to disk first, a slot created for a
// key that has a file starts from that file (when it matches this model and is intact), and
// save_all() writes every slot (when the daemon stops). A rejected file is reported through
// take_warnings(), never trusted, and removed.
// Thread-safety: owned by the compute worker. stats() is a copy the owner may publish.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/result.h"
#include "inference/forward/engine.h"
#include "inference/session/sequence.h"
#include "inference/session/slot_store.h"

namespace hearth::inference {

struct session_cache_stats {
    int32_t n_slots = 0;
    uint64_t budget_bytes = 0;
    uint64_t used_bytes = 0;     // allocated by every slot, host and device (the budget counts both)
    uint64_t device_bytes = 0;   // of those, the KV rows of offloaded layers on the device
    int64_t tokens_held = 0;     // valid positions over every slot
    uint64_t n_requests = 0;
    uint64_t n_hits = 0;         // requests that found their slot
    uint64_t n_evictions = 0;
    uint64_t tokens_reused = 0;  // positions kept by prefill over all requests
    uint64_t tokens_evaluated = 0;
    uint64_t n_saved = 0;        // slots written to the slot store
    uint64_t n_restored = 0;     // slots read back from it
    uint64_t n_rejected = 0;     // slot files refused (wrong model, truncated, corrupted)
};

class session_cache {
public:
    session_cache(const engine & eng, kv_types cache_types, int32_t n_ctx, uint64_t budget_bytes);

    // The slot for `key`, made ready to hold n_positions positions: created if absent, made
    // most recently used, its storage reserved, and other slots evicted (least recently used
    // first) as the budget needs. The pointer stays valid until the next acquire() or erase().
    result<sequence *> acquire(const std::string & key, int32_t n_positions);
    // Whether acquire(key, n_positions) would find room without evicting another slot.
    bool has_room(const std::string & key, int32_t n_positions) const;

    // Which of a document's slots a prompt should use. A document may hold up to max_slots
    // ("doc", "doc\n1", ...), e.g. one per place the user works at in a long file: the prompt
    // takes the slot that would reuse most of it (common prefix, plus moved chunks when
    // chunk_min > 0), or a new slot when none reuses a quarter of it and there is room.
    std::string pick_slot(const std::string & doc, std::span<const token_id> prompt, int32_t chunk_min,
                          int32_t max_slots, int32_t chunk_end = -1) const;
    // The positions a prefill of `prompt` on slot `key` would keep (its common prefix, plus
    // moved chunks when chunk_min > 0); 0 for a slot that does not exist.
    size_t reusable_positions(const std::string & key, std::span<const token_id> prompt, int32_t chunk_min,
                              int32_t chunk_end = -1) const;
    // Every slot of the document (see pick_slot), written to the store first when attached.
    void evict_document(const std::string & doc);

    // Records what a prefill on an acquired slot did (for the hit-rate statistics).
    void record(const prefill_stats & st);

    // Persistence (optional): the store must outlive the cache; nullptr detaches it.
    void attach_store(slot_store * store) { store_ = store; }
    // Writes every slot to the store, most recently used first; the first error, if any.
    status save_all();
    // Messages about slot files that were refused or could not be written, oldest first.
    std::vector<std::string> take_warnings() { return std::exchange(warnings_, {}); }

    // Drops the slot without saving it.
    void erase(const std::string & key);
    // Drops the slot, writing it to the store first when one is attached (a closed document:
    // reopening it starts from the file).
    void evict(const std::string & key);
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
    kv_types types_;
    int32_t n_ctx_;
    uint64_t budget_;
    std::unordered_map<std::string, slot> slots_;
    std::list<std::string> lru_;  // front: most recently used
    session_cache_stats counters_;
    slot_store * store_ = nullptr;
    std::vector<std::string> warnings_;

    void save_slot(const std::string & key, const sequence & seq);
};

}  // namespace hearth::inference
