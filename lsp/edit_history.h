// edit_history: one document's recent changes as a person would describe them. The editor's
// didChange events (a keystroke each, or a paste, or a whole new text) are coalesced: typing or
// deleting that continues where the last edit ends (or inside what it inserted) grows that edit;
// a change elsewhere, or one after a pause, starts a new edit. Each edit holds what it removed
// and what it inserted at a byte offset into the document's CURRENT text: a later edit before
// it shifts it, so the newest edits can be shown against the text as it is now (the next-edit
// prompt's "recent edits"). Bounded: at most max_edits edits and max_bytes of removed + inserted
// text, the oldest going first; an edit larger than max_bytes alone is not kept.
// Thread-safety: none; owned by its document, on the connection's server thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

namespace hearth::lsp {

struct edit_history_limits {
    size_t max_edits = 16;
    size_t max_bytes = 16u << 10;
    // A change after this long without one starts a new edit, even where the last one ends.
    std::chrono::milliseconds pause{1500};
};

class edit_history {
public:
    using clock = std::chrono::steady_clock;

    struct edit {
        size_t offset = 0;         // where it starts in the document's current text
        std::string removed;       // the text it replaced
        std::string inserted;      // the text now at [offset, offset + inserted.size())
        clock::time_point first;   // its first change
        clock::time_point last;    // its latest change
    };

    explicit edit_history(edit_history_limits limits = {}) : limits_(limits) {}

    // One change of a didChange: [offset, offset + removed.size()) of the text before it was
    // replaced by `inserted`. A change that changes nothing is ignored.
    void record(size_t offset, std::string_view removed, std::string_view inserted, clock::time_point now);
    // A whole-text change: recorded as the one edit between the common head and tail of the texts.
    void record_full(std::string_view before, std::string_view after, clock::time_point now);

    const std::deque<edit> & edits() const { return edits_; }   // oldest first
    size_t bytes() const { return bytes_; }
    void clear();

private:
    bool merge_into_last(size_t offset, std::string_view removed, std::string_view inserted, clock::time_point now);
    void shift_older(size_t offset, size_t removed, size_t inserted);
    void enforce_bounds();

    edit_history_limits limits_;
    std::deque<edit> edits_;
    size_t bytes_ = 0;   // removed + inserted over edits_
};

}  // namespace hearth::lsp
