// window_diff: the edits that turn a window of a document into the model's rewrite of it, as
// few and as small as can be: a diff over lines, then each changed run of lines trimmed to what
// differs (a common head and tail, on character boundaries), so renaming one identifier gives
// that identifier's bytes and nothing around them. A rewrite written with "\n" over a window
// whose lines end in "\r\n" is read with the window's line ends, so line ends alone never
// differ.
// Offsets are byte offsets into the original window (UTF-8). Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::daemon {

struct window_edit {
    size_t begin = 0;     // [begin, end) of the original window is replaced
    size_t end = 0;
    std::string text;     // by this
    bool operator==(const window_edit &) const = default;
};

// In order, not overlapping; empty when the rewrite is the window.
std::vector<window_edit> diff_window(std::string_view original, std::string_view rewritten);

// The rewrite with the window's line ends: where the original's lines end in "\r\n", every
// "\n" of the rewrite not already preceded by "\r" gains one.
std::string with_line_ends_of(std::string_view original, std::string_view rewritten);

}  // namespace hearth::daemon
