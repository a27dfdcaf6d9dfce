#include "inference/session/session_cache.h"

#include <algorithm>

namespace hearth::inference {

session_cache::session_cache(const engine & eng, kv_types cache_types, int32_t n_ctx, uint64_t budget_bytes)
    : eng_(eng), types_(cache_types), n_ctx_(n_ctx), budget_(budget_bytes) {}

uint64_t session_cache::bytes_for_positions(int32_t n_positions) const {
    // The same rounding kv_cache::reserve applies.
    const int32_t step = kv_cache::k_grow_positions;
    const int32_t grown = std::min(n_ctx_, (n_positions + step - 1) / step * step);
    const hparams & hp = eng_.mdl().hp();
    return kv_bytes_per_token(types_, hp.n_layer, hp.n_embd_kv()) * static_cast<uint64_t>(grown);
}

bool session_cache::has_room(const std::string & key, int32_t n_positions) const {
    const uint64_t need = bytes_for_positions(n_positions);
    auto it = slots_.find(key);
    const uint64_t have = it == slots_.end() ? 0 : it->second.seq->cache.allocated_bytes();
    return stats().used_bytes + (need > have ? need - have : 0) <= budget_;
}

result<sequence *> session_cache::acquire(const std::string & key, int32_t n_positions) {
    if (n_positions < 1 || n_positions > n_ctx_)
        return fail("session cache: ", n_positions, " positions do not fit the context of ", n_ctx_, " tokens");
    const uint64_t need = bytes_for_positions(n_positions);
    if (need > budget_)
        return fail("session cache: this request needs ", need, " bytes of KV cache, more than the whole budget of ",
                    budget_, " bytes (raise --kv-budget or shorten the context)");
    ++counters_.n_requests;

    auto it = slots_.find(key);
    const bool created = it == slots_.end();
    if (created) {
        lru_.push_front(key);
        auto seq = std::make_unique<sequence>(eng_.make_cache(types_, n_ctx_));
        it = slots_.emplace(key, slot{std::move(seq), lru_.begin()}).first;
    } else {
        ++counters_.n_hits;
        lru_.splice(lru_.begin(), lru_, it->second.lru_it);
    }
    sequence & seq = *it->second.seq;

    const uint64_t have = seq.cache.allocated_bytes();
    const uint64_t grow = need > have ? need - have : 0;
    uint64_t used = stats().used_bytes;
    while (used + grow > budget_) {
        // The served slot is at the front, so the back is always another slot here.
        const std::string victim = lru_.back();
        if (victim == key) break;  // cannot happen while need <= budget; kept as a guard
        const sequence & vs = *slots_.at(victim).seq;
        used -= vs.cache.allocated_bytes();
        if (store_) save_slot(victim, vs);
        erase(victim);
        ++counters_.n_evictions;
    }
    seq.cache.reserve(n_positions);
    if (created && store_) {
        // Loads at most n_positions, so the slot stays within what was reserved and budgeted.
        auto loaded = store_->load(key, seq, n_positions);
        if (!loaded) {
            ++counters_.n_rejected;
            warnings_.push_back(loaded.message() + " (ignored and removed)");
            store_->remove(key);
        } else if (*loaded) {
            ++counters_.n_restored;
        }
    }
    return &seq;
}

void session_cache::save_slot(const std::string & key, const sequence & seq) {
    if (seq.cache.n_pos() == 0) return;
    if (auto s = store_->save(key, seq); !s) {
        warnings_.push_back(s.message());
        return;
    }
    ++counters_.n_saved;
}

status session_cache::save_all() {
    if (!store_) return fail("session cache: no slot store attached");
    const size_t before = warnings_.size();
    for (const auto & key : lru_) save_slot(key, *slots_.at(key).seq);
    if (warnings_.size() > before) return fail(warnings_[before]);
    return {};
}

void session_cache::record(const prefill_stats & st) {
    counters_.tokens_reused += static_cast<uint64_t>(st.n_reused);
    counters_.tokens_evaluated += static_cast<uint64_t>(st.n_evaluated);
}

void session_cache::erase(const std::string & key) {
    auto it = slots_.find(key);
    if (it == slots_.end()) return;
    lru_.erase(it->second.lru_it);
    slots_.erase(it);
}

namespace {

// A newline cannot occur in a URI, so "doc\n1" never names another document's slot.
std::string slot_key(const std::string & doc, int32_t i) { return i == 0 ? doc : doc + "\n" + std::to_string(i); }

}  // namespace

std::string session_cache::pick_slot(const std::string & doc, std::span<const token_id> prompt, int32_t chunk_min,
                                     int32_t max_slots, int32_t chunk_end) const {
    std::string best, free_key;
    size_t best_score = 0;
    for (int32_t i = 0; i < std::max(1, max_slots); ++i) {
        const std::string key = slot_key(doc, i);
        auto it = slots_.find(key);
        if (it == slots_.end()) {
            if (free_key.empty()) free_key = key;
            continue;
        }
        const size_t score = reusable_positions(key, prompt, chunk_min, chunk_end);
        if (best.empty() || score > best_score) {
            best = key;
            best_score = score;
        }
    }
    if (best.empty()) return free_key;
    if (best_score * 4 < prompt.size() && !free_key.empty()) return free_key;
    return best;
}

size_t session_cache::reusable_positions(const std::string & key, std::span<const token_id> prompt, int32_t chunk_min,
                                         int32_t chunk_end) const {
    auto it = slots_.find(key);
    if (it == slots_.end()) return 0;
    const auto & held = it->second.seq->tokens;
    const size_t prefix = common_prefix(held, prompt);
    size_t n = prefix;
    if (chunk_min > 0)
        for (const auto & c : find_chunks(held, prompt, prefix, chunk_min, chunk_end)) n += static_cast<size_t>(c.n);
    return n;
}

void session_cache::evict_document(const std::string & doc) {
    evict(doc);
    const std::string prefix = doc + "\n";
    std::vector<std::string> more;
    for (const auto & [key, s] : slots_)
        if (key.compare(0, prefix.size(), prefix) == 0) more.push_back(key);
    for (const auto & key : more) evict(key);
}

void session_cache::evict(const std::string & key) {
    auto it = slots_.find(key);
    if (it == slots_.end()) return;
    if (store_) save_slot(key, *it->second.seq);
    erase(key);
}

std::vector<std::string> session_cache::keys_by_recency() const {
    return {lru_.begin(), lru_.end()};
}

session_cache_stats session_cache::stats() const {
    session_cache_stats s = counters_;
    s.n_slots = static_cast<int32_t>(slots_.size());
    s.budget_bytes = budget_;
    s.used_bytes = 0;
    s.tokens_held = 0;
    for (const auto & [key, sl] : slots_) {
        s.used_bytes += sl.seq->cache.allocated_bytes();
        s.device_bytes += sl.seq->cache.device_bytes();
        s.tokens_held += sl.seq->cache.n_pos();
    }
    return s;
}

}  // namespace hearth::inference
