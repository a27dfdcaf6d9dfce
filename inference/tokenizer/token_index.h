// token_index: token text -> id, the lookup every encoder step makes (SPM tries each
// adjacent pair). Open addressing over one contiguous text pool, with the 64-bit hash kept
// in the slot so a miss rarely touches the text: a std::unordered_map<std::string> spends
// most of SPM's time on cache misses through its nodes.
// Thread-safety: immutable after build; find() may run concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::inference::tokenizer {

class token_index {
public:
    void reserve(size_t n_tokens);
    // Adds the next id's text; returns the id already holding `text`, or -1 when it is new.
    int32_t add(std::string_view text);
    int32_t find(std::string_view text) const;   // -1 when absent
    std::string_view text(int32_t id) const {
        return std::string_view(pool_).substr(offsets_[size_t(id)], offsets_[size_t(id) + 1] - offsets_[size_t(id)]);
    }
    int32_t size() const { return int32_t(offsets_.size()) - 1; }

private:
    struct slot {
        uint64_t hash = 0;
        int32_t id = -1;
    };
    static uint64_t hash_of(std::string_view s);
    void grow();

    std::string pool_;
    std::vector<uint32_t> offsets_{0};   // text of id i: pool_[offsets_[i], offsets_[i+1])
    std::vector<slot> slots_;            // power-of-two size, at most half full
};

}  // namespace hearth::inference::tokenizer
