#include "daemon/pipeline/context_ring.h"

#include <algorithm>
#include <set>

namespace hearth::daemon {
namespace {

constexpr double k_same_piece = 0.9;

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> out;
    size_t start = 0;
    while (start < text.size()) {
        const size_t nl = text.find('\n', start);
        const size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
        out.push_back(text.substr(start, end - start));
        start = end;
    }
    return out;
}

std::string_view trimmed(std::string_view s) {
    const size_t a = s.find_first_not_of(" \t\r\n");
    if (a == std::string_view::npos) return {};
    const size_t b = s.find_last_not_of(" \t\r\n");
    return s.substr(a, b - a + 1);
}

}  // namespace

double context_ring::similarity(std::string_view a, std::string_view b) {
    std::set<std::string_view> lines_b;
    for (auto l : split_lines(b))
        if (auto t = trimmed(l); !t.empty()) lines_b.insert(t);
    size_t n = 0, common = 0;
    for (auto l : split_lines(a)) {
        const auto t = trimmed(l);
        if (t.empty()) continue;
        ++n;
        common += lines_b.count(t);
    }
    return n == 0 ? 1.0 : static_cast<double>(common) / static_cast<double>(n);
}

void context_ring::add(const std::string & uri, std::string_view text, int64_t line) {
    if (max_chunks_ == 0 || chunk_lines_ <= 0) return;
    const auto lines = split_lines(text);
    if (lines.empty()) return;
    const int64_t n = static_cast<int64_t>(lines.size());
    int64_t first = std::clamp<int64_t>(line - chunk_lines_ / 2, 0, std::max<int64_t>(0, n - chunk_lines_));
    const int64_t last = std::min<int64_t>(n, first + chunk_lines_);
    std::string piece;
    for (int64_t i = first; i < last; ++i) piece += lines[static_cast<size_t>(i)];
    if (trimmed(piece).empty()) return;
    if (piece.back() != '\n') piece += '\n';
    std::erase_if(chunks_, [&](const context_chunk & c) {
        return similarity(c.text, piece) >= k_same_piece || similarity(piece, c.text) >= k_same_piece;
    });
    chunks_.push_back({uri, std::move(piece)});
    while (chunks_.size() > max_chunks_) chunks_.pop_front();
}

std::vector<context_chunk> context_ring::chunks_except(std::string_view uri) const {
    std::vector<context_chunk> out;
    for (const auto & c : chunks_)
        if (c.uri != uri) out.push_back(c);
    return out;
}

}  // namespace hearth::daemon
