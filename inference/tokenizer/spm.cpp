// SentencePiece-style encoding as llama.cpp does it for tokenizer.ggml.model = "llama":
// start from UTF-8 characters, repeatedly merge the adjacent pair whose concatenation is the
// highest-scoring token (ties: leftmost), and spell whatever is not a token as <0xHH> bytes.
#include <queue>

#include "inference/tokenizer/unicode.h"
#include "inference/tokenizer/vocab_impl.h"

namespace hearth::inference::tokenizer {

namespace {

struct symbol {
    int32_t prev;
    int32_t next;
    uint32_t start;   // byte offset into the text
    uint32_t n;       // bytes; 0 once merged into its left neighbour
};

struct bigram {
    int32_t left;
    int32_t right;
    float score;
    uint32_t size;
};

struct bigram_order {
    bool operator()(const bigram & a, const bigram & b) const {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

}  // namespace

static void spm_encode_run(const vocab::impl & v, std::string_view text, std::vector<token_id> & out) {
    std::vector<symbol> symbols;
    symbols.reserve(text.size());
    for (size_t off = 0; off < text.size();) {
        // A character is its lead byte and the continuation bytes that follow, up to the
        // length the lead announces; for valid UTF-8 this is llama.cpp's split. Stopping at
        // a non-continuation byte keeps a broken sequence from swallowing a following "▁".
        const size_t want = std::min(utf8_seq_len(static_cast<unsigned char>(text[off])), text.size() - off);
        size_t len = 1;
        while (len < want && (static_cast<unsigned char>(text[off + len]) & 0xC0) == 0x80) ++len;
        const auto index = int32_t(symbols.size());
        symbols.push_back({index - 1, off + len == text.size() ? -1 : index + 1, uint32_t(off), uint32_t(len)});
        off += len;
    }
    if (symbols.empty()) return;

    std::priority_queue<bigram, std::vector<bigram>, bigram_order> queue;
    auto try_add = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const uint32_t size = symbols[left].n + symbols[right].n;
        const token_id id = v.find_mergeable(text.substr(symbols[left].start, size));
        if (id == k_no_token) return;
        queue.push({left, right, v.tokens[id].score, size});
    };
    for (int32_t i = 1; i < int32_t(symbols.size()); ++i) try_add(i - 1, i);

    while (!queue.empty()) {
        const bigram b = queue.top();
        queue.pop();
        symbol & left = symbols[b.left];
        symbol & right = symbols[b.right];
        // A side that has merged since this pair was queued makes the pair stale.
        if (left.n == 0 || right.n == 0 || left.n + right.n != b.size) continue;
        left.n += right.n;
        right.n = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = b.left;
        try_add(left.prev, b.left);
        try_add(b.left, left.next);
    }

    for (int32_t i = 0; i != -1; i = symbols[i].next) {
        const symbol & s = symbols[i];
        const std::string_view piece = text.substr(s.start, s.n);
        const token_id id = v.find_mergeable(piece);
        if (id != k_no_token) {
            out.push_back(id);
            continue;
        }
        for (const char c : piece) out.push_back(v.byte_token[static_cast<unsigned char>(c)]);
    }
}

void spm_encode(const vocab::impl & v, std::string_view text, std::vector<token_id> & out) {
    size_t start = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x80 || !v.spm_isolated[c]) continue;
        spm_encode_run(v, text.substr(start, i - start), out);
        spm_encode_run(v, text.substr(i, 1), out);
        start = i + 1;
    }
    spm_encode_run(v, text.substr(start), out);
}

}  // namespace hearth::inference::tokenizer
