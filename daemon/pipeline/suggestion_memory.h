// suggestion_memory: completions already computed for a document, so some keystrokes need
// no model run at all.
//  - Typed ahead: the user types the first characters of the suggestion on screen; the
//    rest of that suggestion is the answer (what Copilot-style clients show anyway).
//  - Prefetched: the completion that follows a suggestion once it is accepted, computed
//    while the user reads it; accepting it and asking again finds it here.
// A record is the text before and after the cursor it was computed for (as hashes and
// lengths, never a copy of the document) and its items. A lookup matches when the text
// after the cursor is unchanged and the text before it is the record's plus typed
// characters that every returned item starts with.
// Thread-safety: all members lock; shared by connection strands and the compute worker.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::daemon {

class suggestion_memory {
public:
    // Records kept per document: the suggestion on screen and its prefetched successor.
    static constexpr size_t k_records_per_key = 4;

    // Remembers `items` (insert texts, best first) computed for the cursor between `before`
    // and `after`; empty items are not kept.
    void remember(const std::string & key, std::string_view before, std::string_view after,
                  const std::vector<std::string> & items);

    // The remaining texts of the remembered items that the typed characters extend, best
    // first; nullopt when no record matches (or nothing is left to insert).
    std::optional<std::vector<std::string>> lookup(const std::string & key, std::string_view before,
                                                   std::string_view after);

    // Whether a record was made for exactly this cursor text (not counted as a hit).
    bool has(const std::string & key, std::string_view before, std::string_view after) const;

    void forget(const std::string & key);

    uint64_t hits() const;

private:
    // The text around a cursor, as hashes and lengths.
    struct cursor_text {
        uint64_t before_hash = 0, after_hash = 0;
        size_t before_len = 0, after_len = 0;
        static cursor_text of(std::string_view before, std::string_view after);
        bool operator==(const cursor_text &) const = default;
    };
    struct record {
        cursor_text at;
        std::vector<std::string> items;
    };
    mutable std::mutex mu_;
    std::map<std::string, std::list<record>, std::less<>> records_;   // newest first
    uint64_t hits_ = 0;
};

}  // namespace hearth::daemon
