#include "lsp/edit_history.h"

#include <algorithm>

namespace hearth::lsp {

namespace {
size_t size_of(const edit_history::edit & e) { return e.removed.size() + e.inserted.size(); }
}  // namespace

void edit_history::clear() {
    edits_.clear();
    bytes_ = 0;
}

// The change continues the last edit when it touches what that edit inserted (ends at or after
// its start, starts at or before its end): typing on, backspacing over it, or selecting into it.
// The merged edit is then the one between the text before the last edit and the text after this
// change, so it still reads as "these bytes became those".
bool edit_history::merge_into_last(size_t o, std::string_view r, std::string_view i, clock::time_point now) {
    if (edits_.empty()) return false;
    edit & e = edits_.back();
    if (now - e.last > limits_.pause) return false;
    const size_t a = e.offset, b = e.offset + e.inserted.size();
    if (o > b || o + r.size() < a) return false;
    std::string removed;
    if (o < a) removed.append(r.substr(0, a - o));   // original text before the edit, removed now
    removed += e.removed;
    if (o + r.size() > b) removed.append(r.substr(r.size() - (o + r.size() - b)));   // and after it
    std::string inserted(e.inserted.substr(0, o > a ? o - a : 0));
    inserted += i;
    const size_t tail = std::min(e.inserted.size(), o + r.size() > a ? o + r.size() - a : 0);
    inserted.append(e.inserted, tail, std::string::npos);
    bytes_ -= size_of(e);
    e.offset = std::min(o, a);
    e.removed = std::move(removed);
    e.inserted = std::move(inserted);
    e.last = now;
    bytes_ += size_of(e);
    return true;
}

// Older edits after the change move with it; one it overlaps is clamped to its start (it was
// partly rewritten; its text is an approximation now, good enough to show as history).
void edit_history::shift_older(size_t o, size_t removed, size_t inserted) {
    for (size_t k = 0; k + 1 < edits_.size(); ++k) {
        edit & e = edits_[k];
        if (e.offset >= o + removed) e.offset = e.offset - removed + inserted;
        else if (e.offset > o) e.offset = o;
    }
}

void edit_history::record(size_t o, std::string_view r, std::string_view i, clock::time_point now) {
    if (r == i) return;
    if (!merge_into_last(o, r, i, now)) {
        edits_.push_back(edit{o, std::string(r), std::string(i), now, now});
        bytes_ += r.size() + i.size();
    }
    shift_older(o, r.size(), i.size());
    // A merge can undo an edit entirely (typed, then deleted again): nothing left to describe.
    if (edits_.back().removed == edits_.back().inserted) {
        bytes_ -= size_of(edits_.back());
        edits_.pop_back();
    }
    enforce_bounds();
}

void edit_history::record_full(std::string_view before, std::string_view after, clock::time_point now) {
    size_t head = 0;
    const size_t n = std::min(before.size(), after.size());
    while (head < n && before[head] == after[head]) ++head;
    size_t tail = 0;
    while (tail < n - head && before[before.size() - 1 - tail] == after[after.size() - 1 - tail]) ++tail;
    // Never split a UTF-8 character: the head and tail end on character boundaries.
    const auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; };
    while (head > 0 && head < before.size() && continuation(before[head])) --head;
    while (tail > 0 && continuation(before[before.size() - tail])) --tail;
    record(head, before.substr(head, before.size() - head - tail), after.substr(head, after.size() - head - tail), now);
}

void edit_history::enforce_bounds() {
    while (!edits_.empty() && (edits_.size() > limits_.max_edits || bytes_ > limits_.max_bytes)) {
        bytes_ -= size_of(edits_.front());
        edits_.pop_front();
    }
}

}  // namespace hearth::lsp
