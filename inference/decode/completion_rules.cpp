#include "inference/decode/completion_rules.h"

#include <algorithm>
#include <optional>

namespace hearth::inference {
namespace {

std::string_view trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

// Width of the leading whitespace, a tab counting as one column (we only compare).
size_t indent_of(std::string_view line) {
    size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    return i;
}

std::string_view current_line_head(std::string_view prefix) {
    const auto nl = prefix.rfind('\n');
    return nl == std::string_view::npos ? prefix : prefix.substr(nl + 1);
}

std::string_view current_line_tail(std::string_view suffix) {
    return suffix.substr(0, std::min(suffix.find('\n'), suffix.size()));
}

// The first line with text after the newline at `nl`, untrimmed. With `finished`, only a line a
// newline ends counts: the line still being written may not have its text yet.
std::optional<std::string_view> next_line_with_text(std::string_view text, size_t nl, bool finished) {
    while (nl != std::string_view::npos) {
        const size_t next = text.find('\n', nl + 1);
        if (next == std::string_view::npos && finished) break;
        const auto line = text.substr(nl + 1, (next == std::string_view::npos ? text.size() : next) - nl - 1);
        if (!trim(line).empty()) return line;
        nl = next;
    }
    return std::nullopt;
}

// The first non-empty line after the cursor's line, trimmed.
std::string first_suffix_line(std::string_view suffix) {
    const auto line = next_line_with_text(suffix, suffix.find('\n'), false);
    return line ? std::string(trim(*line)) : std::string();
}

}  // namespace

line_mode guess_line_mode(std::string_view prefix, std::string_view suffix) {
    const auto head = trim(current_line_head(prefix));
    const auto tail = trim(current_line_tail(suffix));
    if (!tail.empty() && tail.find_first_not_of(")]};,") != std::string_view::npos) return line_mode::single_line;
    if (head.empty()) return line_mode::multi_line;
    const char last = head.back();
    return (last == '{' || last == '(' || last == '[' || last == ':') ? line_mode::multi_line : line_mode::single_line;
}

stop_rule make_completion_rule(line_mode mode, std::string_view prefix, std::string_view suffix) {
    if (mode == line_mode::single_line) {
        return [](std::string_view text) -> size_t {
            // A completion that starts with a newline (or blank lines) would be invisible on
            // this line: let the model write the next line with text, and stop at its end.
            const size_t start = text.find_first_not_of(" \t\r\n");
            if (start == std::string_view::npos) return std::string::npos;
            const size_t nl = text.find('\n', start);
            return nl == std::string_view::npos ? std::string::npos : nl + 1;
        };
    }
    const std::string head(current_line_head(prefix));
    const bool blank_head = trim(head).empty();
    const size_t head_indent = blank_head ? head.size() : indent_of(head);
    const bool opens_block = !blank_head && std::string_view("{([:").find(trim(head).back()) != std::string_view::npos;
    const std::string suffix_line = first_suffix_line(suffix);
    return [head, blank_head, head_indent, opens_block, suffix_line](std::string_view text) -> size_t {
        // From a blank line the completion is in the block its first line with text is indented
        // for (the indentation typed before the cursor included), not the cursor's column: a
        // line indented less leaves that block.
        size_t base_indent = head_indent;
        if (blank_head) {
            const std::string first = head + std::string(text.substr(0, text.find('\n')));
            if (!trim(first).empty()) {
                base_indent = indent_of(first);
            } else if (const auto line = next_line_with_text(text, text.find('\n'), true)) {
                base_indent = std::max(base_indent, indent_of(*line));
            }
        }
        // Look at each finished line after the first (the first continues the cursor's line).
        size_t line_start = text.find('\n');
        int blank_run = 0;
        while (line_start != std::string_view::npos) {
            const size_t next = text.find('\n', line_start + 1);
            if (next == std::string_view::npos) break;  // the last line is not finished yet
            const auto line = text.substr(line_start + 1, next - line_start - 1);
            const auto t = trim(line);
            if (t.empty()) {
                if (++blank_run >= 2) return line_start + 1;
            } else {
                blank_run = 0;
                if (!suffix_line.empty() && t == suffix_line) return line_start + 1;
                // Leaving the block ends the completion. A block opened on the cursor's line
                // ends at its closing bracket, which belongs to the completion.
                const size_t ind = indent_of(line);
                const bool closer = std::string_view("})]").find(t.front()) != std::string_view::npos;
                if (opens_block && ind <= base_indent) return closer ? next + 1 : line_start + 1;
                if (ind < base_indent) return line_start + 1;
            }
            line_start = next;
        }
        return std::string::npos;
    };
}

bool repeats_cursor_line(std::string_view prefix, std::string_view suffix, std::string_view completion) {
    const auto rest = trim(current_line_tail(suffix));
    if (!trim(current_line_head(prefix)).empty() || rest.empty()) return false;
    const size_t start = completion.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos) return false;
    const size_t end = std::min(completion.find('\n', start), completion.size());
    return trim(completion.substr(start, end - start)) == rest;
}

}  // namespace hearth::inference
