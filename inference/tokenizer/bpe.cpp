// Byte-level BPE as llama.cpp does it for tokenizer.ggml.model = "gpt2": the pre-tokenizer
// cuts the text into words; inside each word, every byte starts as the token that spells it,
// and the adjacent pair with the lowest merge rank merges first (ties: leftmost) until no
// ranked pair is left. Symbols are token ids and ranks come from an id-pair table, so the
// loop never builds strings. Results per word are cached: source code repeats its words.
#include <queue>

#include "inference/tokenizer/unicode.h"
#include "inference/tokenizer/vocab_impl.h"

namespace hearth::inference::tokenizer {

namespace {

struct symbol {
    int32_t prev;
    int32_t next;
    token_id id;      // k_no_token once merged into its left neighbour
};

struct bigram {
    int32_t rank;
    int32_t left;
    token_id left_id;
    token_id right_id;
    token_id merged;
};

struct bigram_order {
    bool operator()(const bigram & a, const bigram & b) const {
        return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
};

void merge_word(const vocab::impl & v, std::string_view word, std::vector<token_id> & out) {
    // Bytes the vocabulary cannot spell (C0, C1, F1..FF at most) become U+FFFD.
    for (const char c : word) {
        if (v.byte_token[static_cast<unsigned char>(c)] != k_no_token) continue;
        std::string replaced;
        for (const char d : word) {
            if (v.byte_token[static_cast<unsigned char>(d)] == k_no_token) replaced += "\xEF\xBF\xBD";
            else replaced += d;
        }
        merge_word(v, replaced, out);
        return;
    }
    if (v.ignore_merges) {
        const token_id whole = v.find_mergeable(bytes_to_symbols(word));
        if (whole != k_no_token) {
            out.push_back(whole);
            return;
        }
    }
    if (word.size() == 1) {
        out.push_back(v.byte_token[static_cast<unsigned char>(word[0])]);
        return;
    }

    std::vector<symbol> symbols(word.size());
    for (size_t i = 0; i < word.size(); ++i) {
        symbols[i] = {int32_t(i) - 1, i + 1 == word.size() ? -1 : int32_t(i) + 1,
                      v.byte_token[static_cast<unsigned char>(word[i])]};
    }

    std::priority_queue<bigram, std::vector<bigram>, bigram_order> queue;
    auto try_add = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const token_id a = symbols[left].id;
        const token_id b = symbols[right].id;
        const bpe_merge * m = v.merges.find(a, b);
        if (!m) return;
        queue.push({m->rank, left, a, b, m->merged});
    };
    for (int32_t i = 1; i < int32_t(symbols.size()); ++i) try_add(i - 1, i);

    while (!queue.empty()) {
        const bigram b = queue.top();
        queue.pop();
        symbol & left = symbols[b.left];
        if (left.id != b.left_id || left.next < 0) continue;
        const int32_t right_index = left.next;
        symbol & right = symbols[right_index];
        // Either side having changed since the pair was queued makes it stale: a symbol's
        // id only changes by growing, so equal ids mean the same text as when queued.
        if (right.id != b.right_id) continue;
        left.id = b.merged;
        right.id = k_no_token;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = b.left;
        try_add(left.prev, b.left);
        try_add(b.left, left.next);
    }

    for (int32_t i = 0; i != -1; i = symbols[i].next) {
        const token_id id = symbols[i].id;
        if (id < v.n_tokens()) {
            out.push_back(id);
            continue;
        }
        // A merge whose result is not a token: spell its bytes one by one.
        for (const char c : v.merged_bytes[size_t(id - v.n_tokens())]) {
            out.push_back(v.byte_token[static_cast<unsigned char>(c)]);
        }
    }
}

}  // namespace

bool word_cache::find(std::string_view word, std::vector<token_id> & out) const {
    std::lock_guard lock(mutex_);
    const auto it = map_.find(word);
    if (it == map_.end()) return false;
    out.insert(out.end(), it->second.begin(), it->second.end());
    return true;
}

void word_cache::insert(std::string_view word, const std::vector<token_id> & ids) const {
    std::lock_guard lock(mutex_);
    if (map_.size() >= k_max_entries) map_.clear();   // bounded memory; hot words come back fast
    map_.emplace(std::string(word), ids);
}

void bpe_encode(const vocab::impl & v, std::string_view text, std::vector<token_id> & out) {
    std::vector<token_id> ids;
    for (const byte_span span : v.pre_tok->split(text)) {
        const std::string_view word = text.substr(span.offset, span.length);
        // Words of one byte are a table lookup; long ones (a minified line) are rarely
        // repeated and would crowd the cache.
        if (word.size() == 1 || word.size() > 256) {
            merge_word(v, word, out);
            continue;
        }
        if (v.cache.find(word, out)) continue;
        ids.clear();
        merge_word(v, word, ids);
        v.cache.insert(word, ids);
        out.insert(out.end(), ids.begin(), ids.end());
    }
}

}  // namespace hearth::inference::tokenizer
