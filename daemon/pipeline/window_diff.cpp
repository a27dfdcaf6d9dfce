#include "daemon/pipeline/window_diff.h"

#include <algorithm>
#include <cstdint>

namespace hearth::daemon {
namespace {

// The lines of a text, each with its line end, as offsets: [starts[k], starts[k + 1]).
std::vector<size_t> line_starts(std::string_view t) {
    std::vector<size_t> s{0};
    for (size_t i = 0; i < t.size(); ++i)
        if (t[i] == '\n' && i + 1 < t.size()) s.push_back(i + 1);
    s.push_back(t.size());
    if (t.empty()) s.pop_back();   // no lines: {0}
    return s;
}

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

// A plain LCS table over lines rather than a library (Debian has dtl): a window is a few dozen
// lines, so the n*m table is a few thousand cells and this stays a screen of code.
struct line_diff {
    std::string_view a, b;
    std::vector<size_t> la, lb;   // line starts, one past the last line at the end

    size_t n() const { return la.size() - 1; }
    size_t m() const { return lb.size() - 1; }
    std::string_view line_a(size_t k) const { return a.substr(la[k], la[k + 1] - la[k]); }
    std::string_view line_b(size_t k) const { return b.substr(lb[k], lb[k + 1] - lb[k]); }
};

// One changed run: original lines [i0, i1) became rewritten lines [j0, j1); trimmed to what
// differs within it.
window_edit trimmed_hunk(const line_diff & d, size_t i0, size_t i1, size_t j0, size_t j1) {
    size_t ob = d.la[i0], oe = d.la[i1];
    size_t nb = d.lb[j0], ne = d.lb[j1];
    while (ob < oe && nb < ne && d.a[ob] == d.b[nb]) ++ob, ++nb;
    while (oe > ob && ne > nb && d.a[oe - 1] == d.b[ne - 1]) --oe, --ne;
    // Whole characters: a head that stopped inside one (two characters sharing a lead byte)
    // steps back to its start, a tail forward to its end.
    while (ob > d.la[i0] && ob < d.a.size() && continuation(d.a[ob])) --ob, --nb;
    while (oe < d.la[i1] && oe < d.a.size() && continuation(d.a[oe])) ++oe, ++ne;
    return window_edit{ob, oe, std::string(d.b.substr(nb, ne - nb))};
}

}  // namespace

std::string with_line_ends_of(std::string_view original, std::string_view rewritten) {
    if (original.find("\r\n") == std::string_view::npos) return std::string(rewritten);
    std::string out;
    out.reserve(rewritten.size() + rewritten.size() / 16);
    for (size_t i = 0; i < rewritten.size(); ++i) {
        if (rewritten[i] == '\n' && (i == 0 || rewritten[i - 1] != '\r')) out += '\r';
        out += rewritten[i];
    }
    return out;
}

std::vector<window_edit> diff_window(std::string_view original, std::string_view rewritten_text) {
    const std::string rewritten = with_line_ends_of(original, rewritten_text);
    line_diff d{original, rewritten, line_starts(original), line_starts(rewritten)};
    const size_t n = d.n(), m = d.m();
    // lcs[i][j]: the longest common subsequence of lines a[i..] and b[j..].
    std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t & { return lcs[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;)
        for (size_t j = m; j-- > 0;)
            at(i, j) = d.line_a(i) == d.line_b(j) ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    std::vector<window_edit> out;
    size_t i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && d.line_a(i) == d.line_b(j)) {
            ++i, ++j;
            continue;
        }
        const size_t i0 = i, j0 = j;
        // Walk the changed run until the next common line the table keeps.
        while ((i < n || j < m) && !(i < n && j < m && d.line_a(i) == d.line_b(j) && at(i, j) == at(i + 1, j + 1) + 1)) {
            if (j < m && (i == n || at(i, j + 1) >= at(i + 1, j))) ++j;
            else ++i;
        }
        // A run of as many lines on both sides is read line for line (a rename on consecutive
        // lines is two edits, not one spanning the text between them); else as one block.
        const bool paired = i - i0 == j - j0;
        for (size_t k = 0; k < (paired ? i - i0 : 1); ++k) {
            window_edit e = paired ? trimmed_hunk(d, i0 + k, i0 + k + 1, j0 + k, j0 + k + 1) : trimmed_hunk(d, i0, i, j0, j);
            if (e.begin != e.end || !e.text.empty()) out.push_back(std::move(e));
        }
    }
    return out;
}

}  // namespace hearth::daemon
