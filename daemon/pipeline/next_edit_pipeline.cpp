#include "daemon/pipeline/next_edit_pipeline.h"

#include <algorithm>
#include <set>

#include "daemon/pipeline/window_diff.h"

namespace hearth::daemon {
namespace {

// The start of the line that holds `at`.
size_t line_begin(std::string_view t, size_t at) {
    at = std::min(at, t.size());
    const size_t nl = at == 0 ? std::string_view::npos : t.rfind('\n', at - 1);
    return nl == std::string_view::npos ? 0 : nl + 1;
}
// Just past the end of the line that holds `at` (its newline included).
size_t line_end(std::string_view t, size_t at) {
    const size_t nl = t.find('\n', std::min(at, t.size()));
    return nl == std::string_view::npos ? t.size() : nl + 1;
}
// The start of the line n lines above the one starting at `begin`.
size_t lines_up(std::string_view t, size_t begin, int32_t n) {
    for (; n > 0 && begin > 0; --n) begin = line_begin(t, begin - 1);
    return begin;
}
// Just past the line n lines below the one ending at `end`.
size_t lines_down(std::string_view t, size_t end, int32_t n) {
    for (; n > 0 && end < t.size(); --n) end = line_end(t, end);
    return end;
}
size_t count_lines(std::string_view t, size_t b, size_t e) {
    return static_cast<size_t>(std::count(t.begin() + static_cast<std::ptrdiff_t>(b), t.begin() + static_cast<std::ptrdiff_t>(e), '\n'));
}

// The edit still stands where the history says (an older edit partly rewritten since may not).
// Up to this many lines touched is an edit whatever the window's size.
constexpr size_t k_max_lines_always_edit = 4;

bool stands(const next_edit_ask & ask, const recent_edit & e) {
    return e.offset <= ask.text.size() && ask.text.compare(e.offset, e.inserted.size(), e.inserted) == 0;
}

std::string without_whitespace(std::string_view s) {
    std::string out;
    for (char c : s)
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') out += c;
    return out;
}

bool is_word_byte(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x80 || u == '_' || (u >= '0' && u <= '9') || ((u | 0x20) >= 'a' && (u | 0x20) <= 'z');
}

std::set<std::string_view> words_of(std::string_view s) {
    std::set<std::string_view> out;
    for (size_t i = 0; i < s.size();) {
        if (!is_word_byte(s[i])) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < s.size() && is_word_byte(s[j])) ++j;
        out.insert(s.substr(i, j - i));
        i = j;
    }
    return out;
}

bool is_number(std::string_view w) {
    return std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool continues_recent_edits(std::string_view old, std::string_view text, const std::vector<recent_edit> & edits) {
    const auto old_words = words_of(old), new_words = words_of(text);
    std::set<std::string_view> recent;
    for (const auto & e : edits)
        for (std::string_view s : {std::string_view(e.removed), std::string_view(e.inserted)})
            recent.merge(words_of(s));
    bool any_word = false;
    const auto known = [&](const std::set<std::string_view> & words, const std::set<std::string_view> & other) {
        for (std::string_view w : words) {
            if (other.contains(w)) continue;
            any_word = true;
            if (!is_number(w) && !recent.contains(w)) return false;
        }
        return true;
    };
    if (!known(new_words, old_words) || !known(old_words, new_words)) return false;
    if (any_word) return true;
    // Punctuation and spaces alone: a recent edit typed or removed the same.
    return std::any_of(edits.begin(), edits.end(), [&](const recent_edit & e) {
        return (!text.empty() && e.inserted.find(text) != std::string::npos) ||
               (!old.empty() && e.removed.find(old) != std::string::npos);
    });
}

std::string path_of_uri(std::string_view uri) {
    if (const size_t scheme = uri.find("://"); scheme != std::string_view::npos) {
        uri.remove_prefix(scheme + 3);
        uri.remove_prefix(std::min(uri.size(), uri.find('/')));   // the authority ("" for file:///)
    }
    while (uri.starts_with("/")) uri.remove_prefix(1);
    return std::string(uri);
}

window_span next_edit_window(const next_edit_ask & ask, int32_t window_lines) {
    const std::string_view t = ask.text;
    const size_t cursor_line = line_begin(t, ask.cursor);
    window_span w{lines_up(t, cursor_line, window_lines), lines_down(t, line_end(t, ask.cursor), window_lines)};
    // Where the latest edit was, when it is near, is in the window too: the next edit is often
    // beside it (the next argument, the line below).
    if (!ask.edits.empty() && stands(ask, ask.edits.back())) {
        const auto & e = ask.edits.back();
        const size_t eb = line_begin(t, e.offset), ee = line_end(t, e.offset + e.inserted.size());
        if (eb < w.begin && count_lines(t, eb, w.begin) <= static_cast<size_t>(window_lines)) w.begin = eb;
        if (ee > w.end && count_lines(t, w.end, ee) <= static_cast<size_t>(window_lines)) w.end = ee;
    }
    return w;
}

std::pair<next_edit_request, window_span> next_edit_pipeline::request_for(const next_edit_ask & ask) const {
    const std::string_view t = ask.text;
    const window_span w = next_edit_window(ask, settings_.window_lines);
    next_edit_request req;
    req.uri = ask.uri;
    req.path = path_of_uri(ask.uri);
    req.language_id = ask.language_id;
    req.window = std::string(t.substr(w.begin, w.end - w.begin));
    req.cursor = std::clamp(ask.cursor, w.begin, w.end) - w.begin;
    req.window_before = req.window;
    const size_t first = ask.edits.size() > static_cast<size_t>(settings_.max_edits) ? ask.edits.size() - static_cast<size_t>(settings_.max_edits) : 0;
    for (size_t k = first; k < ask.edits.size(); ++k) {
        const auto & e = ask.edits[k];
        if (!stands(ask, e)) continue;
        const size_t lb = line_begin(t, e.offset), le = line_end(t, e.offset + e.inserted.size());
        next_edit_hunk h;
        h.line = static_cast<uint32_t>(count_lines(t, 0, lb));
        h.updated = std::string(t.substr(lb, le - lb));
        h.original = h.updated;
        h.original.replace(e.offset - lb, e.inserted.size(), e.removed);
        req.edits.push_back(std::move(h));
        // The window before the latest edit, where that edit lies inside it.
        if (k + 1 == ask.edits.size() && e.offset >= w.begin && e.offset + e.inserted.size() <= w.end)
            req.window_before.replace(e.offset - w.begin, e.inserted.size(), e.removed);
    }
    const size_t cb = lines_up(t, w.begin, settings_.context_lines), ce = lines_down(t, w.end, settings_.context_lines);
    req.context = std::string(t.substr(cb, ce - cb));
    req.time_budget = std::chrono::milliseconds(settings_.time_budget_ms);
    return {std::move(req), w};
}

std::vector<predicted_edit> confident_edits(const next_edit_ask & ask, window_span w, std::string_view rewritten) {
    const std::string_view t = ask.text;
    const std::string_view window = t.substr(w.begin, w.end - w.begin);
    const auto edits = diff_window(window, rewritten);
    if (edits.empty()) return {};
    // A rewrite, not an edit: more than half the window's lines touched (and more than a few: a
    // rename through a short function touches most of its lines).
    size_t touched = 0;
    for (const auto & e : edits) touched += count_lines(window, line_begin(window, e.begin), e.end) + 1;
    if (touched * 2 > count_lines(window, 0, window.size()) + 1 && touched > k_max_lines_always_edit) return {};
    const recent_edit * latest = ask.edits.empty() || !stands(ask, ask.edits.back()) ? nullptr : &ask.edits.back();
    // The window as it was before the latest edit, brought back: an undo.
    if (latest && latest->offset >= w.begin && latest->offset + latest->inserted.size() <= w.end) {
        std::string before(window);
        before.replace(latest->offset - w.begin, latest->inserted.size(), latest->removed);
        if (with_line_ends_of(window, rewritten) == before) return {};
    }
    std::vector<predicted_edit> out;
    for (const auto & e : edits) {
        const predicted_edit p{w.begin + e.begin, w.begin + e.end, e.text};
        if (without_whitespace(t.substr(p.begin, p.end - p.begin)) == without_whitespace(p.text)) continue;
        if (latest && p.begin == latest->offset && p.end - p.begin == latest->inserted.size() && p.text == latest->removed)
            continue;
        if (!continues_recent_edits(t.substr(p.begin, p.end - p.begin), p.text, ask.edits)) continue;
        out.push_back(p);
    }
    return out;
}

result<std::vector<predicted_edit>> next_edit_pipeline::run(const next_edit_ask & ask, std::stop_token stop) {
    auto [req, w] = request_for(ask);
    auto r = model_->next_edit(req, stop);
    if (!r) return r.error();
    if (!r->window || stop.stop_requested()) return std::vector<predicted_edit>{};
    return confident_edits(ask, w, *r->window);
}

hearth::status next_edit_pipeline::warm_up(const next_edit_ask & ask, std::stop_token stop) {
    auto req = request_for(ask).first;
    req.prefill_only = true;
    auto r = model_->next_edit(req, stop);
    if (!r) return r.error();
    return {};
}

}  // namespace hearth::daemon
