#include "daemon/pipeline/suggestion_memory.h"

#include <xxhash.h>

namespace hearth::daemon {
namespace {

uint64_t hash_of(std::string_view s) { return XXH3_64bits(s.data(), s.size()); }

}  // namespace

suggestion_memory::cursor_text suggestion_memory::cursor_text::of(std::string_view before, std::string_view after) {
    return {hash_of(before), hash_of(after), before.size(), after.size()};
}

void suggestion_memory::remember(const std::string & key, std::string_view before, std::string_view after,
                                 const std::vector<std::string> & items) {
    record r{cursor_text::of(before, after), {}};
    for (const auto & i : items)
        if (!i.empty()) r.items.push_back(i);
    if (r.items.empty()) return;
    std::lock_guard lock(mu_);
    auto & list = records_[key];
    list.remove_if([&](const record & o) { return o.at == r.at; });
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
        if (r.at.after_len != after.size() || r.at.after_hash != after_hash) continue;
        if (before.size() < r.at.before_len || hash_of(before.substr(0, r.at.before_len)) != r.at.before_hash) continue;
        const std::string_view typed = before.substr(r.at.before_len);
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
    const cursor_text at = cursor_text::of(before, after);
    for (const auto & r : it->second)
        if (r.at == at) return true;
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
