#include "inference/tokenizer/token_index.h"

#include <xxhash.h>

namespace hearth::inference::tokenizer {

uint64_t token_index::hash_of(std::string_view s) {
    return XXH3_64bits(s.data(), s.size());
}

int32_t token_index::find(std::string_view text) const {
    if (slots_.empty()) return -1;
    const uint64_t h = hash_of(text);
    const size_t mask = slots_.size() - 1;
    for (size_t i = size_t(h) & mask;; i = (i + 1) & mask) {
        const slot & s = slots_[i];
        if (s.id < 0) return -1;
        if (s.hash == h && this->text(s.id) == text) return s.id;
    }
}

void token_index::reserve(size_t n_tokens) {
    offsets_.reserve(n_tokens + 1);
    while (slots_.size() < 2 * n_tokens) grow();
}

void token_index::grow() {
    const size_t n = slots_.empty() ? 1024 : slots_.size() * 2;
    std::vector<slot> next(n);
    for (const slot & s : slots_) {
        if (s.id < 0) continue;
        size_t i = size_t(s.hash) & (n - 1);
        while (next[i].id >= 0) i = (i + 1) & (n - 1);
        next[i] = s;
    }
    slots_.swap(next);
}

int32_t token_index::add(std::string_view text) {
    if (const int32_t existing = find(text); existing >= 0) return existing;
    const auto id = int32_t(size());
    pool_.append(text);
    offsets_.push_back(uint32_t(pool_.size()));
    if (2 * (size_t(id) + 1) > slots_.size()) grow();
    const uint64_t h = hash_of(text);
    const size_t mask = slots_.size() - 1;
    size_t i = size_t(h) & mask;
    while (slots_[i].id >= 0) i = (i + 1) & mask;
    slots_[i] = {h, id};
    return -1;
}

}  // namespace hearth::inference::tokenizer
