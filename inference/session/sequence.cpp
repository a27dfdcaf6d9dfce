#include "inference/session/sequence.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "inference/cache/kv_shift.h"

namespace hearth::inference {
namespace {

// Chunks are found by their first k_seed tokens, then extended; a seed shorter than
// chunk_min keeps the index small while still finding every chunk that long.
constexpr int32_t k_seed = 8;

uint64_t seed_hash(const token_id * t, int32_t n) {
    uint64_t h = 1469598103934665603ull;
    for (int32_t i = 0; i < n; ++i) h = (h ^ static_cast<uint32_t>(t[i])) * 1099511628211ull;
    return h;
}

}  // namespace

size_t common_prefix(std::span<const token_id> a, std::span<const token_id> b) {
    const size_t n = std::min(a.size(), b.size());
    size_t k = 0;
    while (k < n && a[k] == b[k]) ++k;
    return k;
}

std::vector<token_chunk> find_chunks(std::span<const token_id> old_tokens, std::span<const token_id> prompt, size_t from,
                                     int32_t chunk_min, int32_t end) {
    std::vector<token_chunk> out;
    if (chunk_min <= 0 || prompt.empty()) return out;
    size_t end_new = prompt.size() - 1;  // the last prompt token is always evaluated
    if (end >= 0) end_new = std::min(end_new, static_cast<size_t>(end));
    const int32_t seed = std::min(k_seed, chunk_min);
    if (old_tokens.size() < from + static_cast<size_t>(chunk_min) || end_new < from + static_cast<size_t>(chunk_min)) return out;

    std::unordered_multimap<uint64_t, size_t> index;  // seed hash -> old position
    for (size_t q = from; q + seed <= old_tokens.size(); ++q) index.emplace(seed_hash(&old_tokens[q], seed), q);

    size_t next_old = from;  // chunks stay in order: each starts after the previous one ends
    for (size_t i = from; i + static_cast<size_t>(chunk_min) <= end_new;) {
        size_t best_q = 0, best_n = 0;
        auto [lo, hi] = index.equal_range(seed_hash(&prompt[i], seed));
        for (auto it = lo; it != hi; ++it) {
            const size_t q = it->second;
            if (q < next_old) continue;
            size_t n = 0;
            while (q + n < old_tokens.size() && i + n < end_new && old_tokens[q + n] == prompt[i + n]) ++n;
            if (n > best_n || (n == best_n && q < best_q)) best_q = q, best_n = n;
        }
        if (best_n >= static_cast<size_t>(chunk_min)) {
            out.push_back({static_cast<int32_t>(best_q), static_cast<int32_t>(i), static_cast<int32_t>(best_n)});
            next_old = best_q + best_n;
            i += best_n;
        } else {
            ++i;
        }
    }
    return out;
}

result<prefill_stats> prefill(engine & eng, sequence & seq, std::span<const token_id> prompt, std::vector<float> & logits,
                              const prefill_options & opts) {
    if (prompt.empty()) return fail("prefill: the prompt is empty");
    if (static_cast<int64_t>(prompt.size()) > seq.cache.n_ctx())
        return fail("prefill: the prompt has ", prompt.size(), " tokens, more than the context of ", seq.cache.n_ctx());
    const auto t0 = std::chrono::steady_clock::now();
    const auto n_prompt = static_cast<int32_t>(prompt.size());

    size_t common = 0;
    if (opts.reuse) {
        common = std::min(common_prefix(seq.tokens, prompt), static_cast<size_t>(seq.n_batch_rows));
        // Re-evaluate the last token for its logits, with the one before it for company: a batch
        // of one sums attention in the one-token order, which a cold evaluation never uses.
        common = std::min(common, prompt.size() >= 2 ? prompt.size() - 2 : size_t{0});
    }
    seq.n_batch_rows = std::min(seq.n_batch_rows, static_cast<int32_t>(common));
    std::vector<token_chunk> chunks;
    if (opts.reuse && opts.chunk_min > 0) chunks = find_chunks(seq.tokens, prompt, common, opts.chunk_min, opts.chunk_end);

    prefill_stats st;
    st.n_prompt = n_prompt;
    st.n_reused = static_cast<int32_t>(common);
    if (chunks.empty()) {
        seq.cache.set_n_pos(static_cast<int32_t>(common));
        seq.tokens.resize(common);
        auto rest = prompt.subspan(common);
        if (auto s = eng.eval(seq.cache, rest, logits, false, opts.stop); !s) {
            // eval checks before it writes; stopped, it counts the batches that completed,
            // each of two tokens or more (so batch rows).
            const auto kept = static_cast<size_t>(seq.cache.n_pos());
            seq.tokens.insert(seq.tokens.end(), rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(kept - common));
            seq.n_batch_rows = static_cast<int32_t>(kept);
            if (!opts.stop.stop_requested()) return s.error();
            st.n_evaluated = static_cast<int32_t>(kept - common);
            st.stopped = true;
            st.t_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            return st;
        }
        seq.tokens.insert(seq.tokens.end(), rest.begin(), rest.end());
        st.n_evaluated = static_cast<int32_t>(rest.size());
        if (rest.size() >= 2) seq.n_batch_rows = n_prompt;
    } else {
        seq.cache.reserve(n_prompt);
        std::vector<kv_move> moves;
        for (const auto & c : chunks) moves.push_back({c.src, c.dst, c.n});
        if (auto s = kv_shift(seq.cache, eng.mdl().hp(), moves); !s) {
            seq.clear();
            return s.error();
        }
        // Every row of the prompt is now either kept or about to be evaluated; a gap token
        // attends only to the rows before it, which are all final by then.
        seq.cache.set_n_pos(n_prompt);
        seq.tokens.assign(prompt.begin(), prompt.end());
        int32_t pos = static_cast<int32_t>(common);
        auto eval_gap = [&](int32_t a, int32_t b) -> status {
            if (a >= b) return {};
            st.n_evaluated += b - a;
            return eng.eval_at(seq.cache, prompt.subspan(a, b - a), a, logits, false, opts.stop);
        };
        // Stopped in the gap at `a`: every row before it is final, the ones from it on are not.
        auto stopped_at = [&](int32_t a) -> result<prefill_stats> {
            seq.cache.set_n_pos(a);
            seq.tokens.resize(static_cast<size_t>(a));
            seq.n_batch_rows = a;
            st.stopped = true;
            st.t_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            return st;
        };
        for (const auto & c : chunks) {
            if (auto s = eval_gap(pos, c.dst); !s) {
                if (opts.stop.stop_requested()) return stopped_at(pos);
                seq.clear();
                return s.error();
            }
            st.n_reused += c.n;
            st.n_shifted += c.n;
            ++st.n_chunks;
            pos = c.dst + c.n;
        }
        if (auto s = eval_gap(pos, n_prompt); !s) {  // never empty: chunks stop before the last token
            if (opts.stop.stop_requested()) return stopped_at(pos);
            seq.clear();
            return s.error();
        }
        seq.n_batch_rows = n_prompt;   // moved chunks are an approximation already (see above)
    }
    st.t_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return st;
}

status decode_one(engine & eng, sequence & seq, token_id tok, std::vector<float> & logits, std::stop_token stop) {
    const token_id one[1] = {tok};
    if (auto s = eng.eval(seq.cache, one, logits, false, std::move(stop)); !s) return s;
    seq.tokens.push_back(tok);
    return {};
}

}  // namespace hearth::inference
