#include "daemon/suggestion_memory.h"

#include <xxhash.h>

namespace hearth::daemon {
namespace {

uint64_t hash_of(std::string_view s) { return XXH3_64bits(s.data(), s.size()); }

}  // namespace

void suggestion_memory::remember(const std::string & key, std::string_view before, std::string_view after,
                                 const std::vector<std::string> & items) {
    record r{hash_of(before), hash_of(after), before.size(), after.size(), {}};
    for (const auto & i : items)
        if (!i.empty()) r.items.push_back(i);
    if (r.items.empty()) return;
    std::lock_guard lock(mu_);
    auto & list = records_[key];
    list.remove_if([&](const record & o) { return o.before_len == r.before_len && o.before_hash == r.before_hash &&
                                                  o.after_len == r.after_len && o.after_hash == r.after_hash; });
    list.push_front(std::move(r));
    if (list.size() > k_records_per_key) list.pop_back();
}

std::optional<std::vector<std::string>> suggestion_memory::lookup(const std::string & key, std::string_view before,
                                                                  std::string_view after) {
    std::lock_guard lock(mu_);
    auto it = records_.find(key);
    if (it == records_.end()) return std::nullopt;
    const uint64_t after_hash = hash_of(after);
    for (const auto & r : it->second) {
        if (r.after_len != after.size() || r.after_hash != after_hash) continue;
        if (before.size() < r.before_len || hash_of(before.substr(0, r.before_len)) != r.before_hash) continue;
        const std::string_view typed = before.substr(r.before_len);
        std::vector<std::string> rest;
        for (const auto & item : r.items)
            if (item.size() > typed.size() && std::string_view(item).substr(0, typed.size()) == typed)
                rest.push_back(item.substr(typed.size()));
        if (rest.empty()) continue;
        ++hits_;
        return rest;
    }
    return std::nullopt;
}

bool suggestion_memory::has(const std::string & key, std::string_view before, std::string_view after) const {
    std::lock_guard lock(mu_);
    auto it = records_.find(key);
    if (it == records_.end()) return false;
    const uint64_t bh = hash_of(before), ah = hash_of(after);
    for (const auto & r : it->second)
        if (r.before_len == before.size() && r.before_hash == bh && r.after_len == after.size() && r.after_hash == ah)
            return true;
    return false;
}

void suggestion_memory::forget(const std::string & key) {
    std::lock_guard lock(mu_);
    records_.erase(key);
}

uint64_t suggestion_memory::hits() const {
    std::lock_guard lock(mu_);
    return hits_;
}

}  // namespace hearth::daemon
