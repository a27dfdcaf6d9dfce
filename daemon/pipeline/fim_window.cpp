#include "daemon/pipeline/fim_window.h"

#include <algorithm>
#include <cctype>

namespace hearth::daemon {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

std::string_view rtrim(std::string_view s) {
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

size_t line_start(std::string_view text, size_t pos) {
    const size_t nl = pos == 0 ? std::string_view::npos : text.rfind('\n', pos - 1);
    return nl == std::string_view::npos ? 0 : nl + 1;
}

size_t line_end(std::string_view text, size_t pos) {   // index of the '\n' (or text.size())
    const size_t nl = text.find('\n', pos);
    return nl == std::string_view::npos ? text.size() : nl;
}

bool opens_block(std::string_view line) {
    const std::string_view t = rtrim(line);
    if (t.empty()) return false;
    const char c = t.back();
    return c == '{' || c == '(' || c == '[' || c == ':' || t.ends_with("=>") || t.ends_with("->");
}

bool is_word_char(char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return std::isalnum(u) || ch == '_' || u >= 0x80;
}

bool is_closer(char ch) { return ch == ')' || ch == ']' || ch == '}'; }

// Closing brackets of s that no bracket before them in s opened.
size_t unmatched_closers(std::string_view s) {
    size_t open = 0, unmatched = 0;
    for (char ch : s) {
        if (ch == '(' || ch == '[' || ch == '{') ++open;
        else if (is_closer(ch)) open > 0 ? --open : ++unmatched;
    }
    return unmatched;
}

// A repeat shorter than this that has a word in it is a coincidence (`for i` before `i in`),
// unless it is the whole rest of the line.
constexpr size_t k_min_word_overlap = 3;

// How much of the completion's end repeats the start of `rest` (the cursor line after the
// cursor), longest first; 0 when no repeat is real: it must start and end between tokens
// (never inside an identifier: `return Fals|e` before `else`), be long enough (above), and
// its closing brackets must close something the completion did not open itself (`foo()`
// before the editor's `)` keeps its own).
size_t real_overlap(std::string_view c, std::string_view rest) {
    if (rest.empty()) return 0;
    const size_t line_at = c.rfind('\n');
    const std::string_view last_line = c.substr(line_at == std::string_view::npos ? 0 : line_at + 1);
    const size_t free_closers = unmatched_closers(c);
    for (size_t k = std::min(last_line.size(), rest.size()); k > 0; --k) {
        const std::string_view o = rest.substr(0, k);
        if (!c.ends_with(o)) continue;
        const size_t p = c.size() - k;
        if (p > 0 && is_word_char(c[p - 1]) && is_word_char(c[p])) continue;
        if (k < rest.size() && is_word_char(rest[k - 1]) && is_word_char(rest[k])) continue;
        if (k < k_min_word_overlap && k < rest.size() && std::any_of(o.begin(), o.end(), is_word_char)) continue;
        if (static_cast<size_t>(std::count_if(o.begin(), o.end(), is_closer)) > free_closers) continue;
        return k;
    }
    return 0;
}

// Where the first line of s that starts (after indentation) with a Markdown fence begins.
size_t fence_line(std::string_view s) {
    for (size_t pos = 0; pos < s.size();) {
        const size_t text = s.find_first_not_of(" \t", pos);
        if (text == std::string_view::npos) break;
        if (s.substr(text).starts_with("```")) return pos;
        const size_t nl = s.find('\n', pos);
        if (nl == std::string_view::npos) break;
        pos = nl + 1;
    }
    return std::string_view::npos;
}

}  // namespace

fim_window cut_fim_window(std::string_view text, size_t cursor, int prefix_lines, int suffix_lines, window_edges edges) {
    cursor = std::min(cursor, text.size());
    // On the grid the edges snap to multiples of half the window, so while the cursor moves
    // through a block of lines the prompt's head stays byte-identical and the KV cache keeps it
    // without chunk reuse; the window then holds prefix_lines to 1.5 x prefix_lines lines.
    const auto cursor_line = static_cast<int64_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(cursor), '\n'));
    const bool grid = edges == window_edges::grid;
    const int64_t prefix_step = grid ? std::max(1, prefix_lines / 2) : 1;
    const int64_t first_line = std::max<int64_t>(0, cursor_line - prefix_lines) / prefix_step * prefix_step;
    size_t begin = line_start(text, cursor);
    for (int64_t l = cursor_line; l > first_line && begin > 0; --l) begin = line_start(text, begin - 1);
    const int64_t suffix_step = grid ? std::max(1, suffix_lines / 2) : 1;
    const int64_t last_line = (cursor_line + suffix_lines + suffix_step - 1) / suffix_step * suffix_step;
    size_t end = line_end(text, cursor);
    for (int64_t l = cursor_line; l < last_line && end < text.size(); ++l) end = line_end(text, end + 1);
    if (end < text.size()) ++end;   // keep the last line's newline: the window ends on a line boundary
    return {std::string(text.substr(begin, cursor - begin)), std::string(text.substr(cursor, end - cursor))};
}

completion_mode detect_mode(std::string_view text, size_t cursor) {
    cursor = std::min(cursor, text.size());
    const size_t ls = line_start(text, cursor);
    const std::string_view head = text.substr(ls, cursor - ls);
    const std::string_view tail = text.substr(cursor, line_end(text, cursor) - cursor);
    const bool tail_closers_only =
        std::all_of(tail.begin(), tail.end(), [](char c) { return is_space(c) || c == ')' || c == ']' || c == '}' || c == ';' || c == ','; });
    if (!tail_closers_only) return completion_mode::single_line;
    if (opens_block(head)) return completion_mode::multi_line;
    if (!trim(head).empty()) return completion_mode::single_line;
    // A blank (or indentation-only) line: inside a block when indented, or when the
    // previous non-blank line opens one.
    if (!head.empty()) return completion_mode::multi_line;
    size_t p = ls;
    while (p > 0) {
        const size_t prev = line_start(text, p - 1);
        const std::string_view line = text.substr(prev, p - 1 - prev);
        if (!trim(line).empty()) return opens_block(line) ? completion_mode::multi_line : completion_mode::single_line;
        p = prev;
    }
    return completion_mode::single_line;
}

std::string_view cleanup_filter_name(cleanup_filter f) {
    switch (f) {
        case cleanup_filter::none: return "none";
        case cleanup_filter::after_line: return "after_line";
        case cleanup_filter::mid_line_newline: return "mid_line_newline";
        case cleanup_filter::suffix_line: return "suffix_line";
        case cleanup_filter::overlap: return "overlap";
        case cleanup_filter::blank: return "blank";
        case cleanup_filter::fence: return "fence";
        case cleanup_filter::new_line_after_word: return "new_line_after_word";
    }
    return "unknown";
}

std::string trim_completion(std::string_view completion, std::string_view prefix, std::string_view suffix,
                            completion_mode mode) {
    return clean_completion(completion, prefix, suffix, mode).text;
}

cleaned_completion clean_completion(std::string_view completion, std::string_view prefix, std::string_view suffix,
                                    completion_mode mode) {
    std::string_view c = completion;
    cleanup_filter cut = trim(c).empty() && !c.empty() ? cleanup_filter::blank : cleanup_filter::none;
    // Keeps c[0, n) and notes the filter when what goes is not blank.
    auto keep = [&](size_t n, cleanup_filter why) {
        if (!trim(c.substr(n)).empty()) cut = why;
        c = c.substr(0, n);
    };
    // The cursor line's text before the cursor, and the rest of it without its leading
    // spaces: what the editor already has.
    const size_t head_at = prefix.rfind('\n');
    const std::string_view head = prefix.substr(head_at == std::string_view::npos ? 0 : head_at + 1);
    std::string_view rest = suffix.substr(0, suffix.find('\n'));
    rest = trim(rest);
    // An instruct model that believes it is answering a chat closes its code block with a
    // fence; in code that has no fences of its own, the answer ends before that line.
    if (prefix.find("```") == std::string_view::npos && suffix.find("```") == std::string_view::npos)
        if (const size_t at = fence_line(c); at != std::string_view::npos) keep(at, cleanup_filter::fence);
    // The model ended its last line (wrote the newline after it): see the end.
    bool ends_line = false;
    if (mode == completion_mode::single_line) {
        // The stop rule lets an answer start on the next line (after blank lines). Where the
        // cursor line has nothing on one side of the cursor, that line is the answer, with the
        // newlines before it; mid-line a newline would split the line: only what is before it counts.
        const size_t first_text = c.find_first_not_of(" \t\r\n\f\v");
        size_t end = c.find('\n');
        const bool starts_below = end != std::string_view::npos && first_text != std::string_view::npos && end < first_text;
        // A line that so far holds one half-typed word: a line below is no continuation of it.
        const std::string_view typed = trim(head);
        if (starts_below && rest.empty() && !typed.empty() && std::all_of(typed.begin(), typed.end(), is_word_char)) {
            keep(0, cleanup_filter::new_line_after_word);
            return {std::string(), cut};
        }
        if (starts_below && (trim(head).empty() || rest.empty())) end = c.find('\n', first_text);
        if (end != std::string_view::npos) {
            keep(end, starts_below && end < first_text ? cleanup_filter::mid_line_newline : cleanup_filter::after_line);
            ends_line = true;
        }
    }
    if (mode == completion_mode::multi_line) {
        // The first non-blank line after the cursor line: a completion line equal to it
        // (and everything after) repeats the suffix.
        std::string_view after = suffix;
        const size_t nl = after.find('\n');
        after = nl == std::string_view::npos ? std::string_view{} : after.substr(nl + 1);
        std::string_view next;
        while (!after.empty()) {
            const size_t e = after.find('\n');
            const std::string_view line = after.substr(0, e);
            if (!trim(line).empty()) {
                next = trim(line);
                break;
            }
            if (e == std::string_view::npos) break;
            after = after.substr(e + 1);
        }
        if (!next.empty()) {
            size_t pos = 0;
            bool first = true;
            while (pos <= c.size()) {
                const size_t e = c.find('\n', pos);
                const std::string_view line = c.substr(pos, e == std::string_view::npos ? std::string_view::npos : e - pos);
                if (!first && trim(line) == next) {
                    keep(pos, cleanup_filter::suffix_line);
                    break;
                }
                first = false;
                if (e == std::string_view::npos) break;
                pos = e + 1;
            }
        }
    }
    const size_t content_end = c.find_last_not_of(" \t\r\n\f\v");
    if (c.find('\n', content_end == std::string_view::npos ? 0 : content_end) != std::string_view::npos) ends_line = true;
    c = rtrim(c);
    // A whole line written at the start of a line that has text: the text goes to the next
    // line, so nothing of it follows the line written; only a line that repeats it whole is
    // nothing new.
    const bool line_before_text = ends_line && trim(head).empty() && !rest.empty();
    if (line_before_text) {
        const size_t nl = c.rfind('\n');
        const size_t last = nl == std::string_view::npos ? 0 : nl + 1;
        if (trim(c.substr(last)) == rest) {
            keep(last, cleanup_filter::overlap);
            c = rtrim(c);
        }
    } else if (const size_t k = real_overlap(c, rest); k > 0) {
        // The completion's end repeats the start of the line's rest.
        keep(c.size() - k, cleanup_filter::overlap);
        // The model put the rest on a line of its own (`{` ... `}`): it stays there.
        const size_t last = c.find_last_not_of(" \t");
        if (last != std::string_view::npos && c[last] == '\n' && !trim(c).empty()) return {std::string(c), cut};
        c = rtrim(c);
        ends_line = false;
    }
    // A whole line written at the start of a line that has text: its newline is part of it,
    // and the cursor line's indentation goes after it, so the existing text keeps its own.
    if (ends_line && !c.empty() && trim(head).empty() && !rest.empty())
        return {std::string(c) + "\n" + std::string(head), cut};
    return {std::string(c), cut};
}

}  // namespace hearth::daemon
