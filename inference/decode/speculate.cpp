#include "inference/decode/speculate.h"

#include <algorithm>
#include <chrono>

#include "inference/decode/sampler.h"

namespace hearth::inference {

std::string_view speculate_mode_name(speculate_mode m) {
    switch (m) {
        case speculate_mode::off: return "off";
        case speculate_mode::lookup: return "lookup";
        case speculate_mode::draft: return "draft";
        case speculate_mode::both: return "both";
    }
    return "unknown";
}

result<speculate_mode> parse_speculate_mode(std::string_view name) {
    for (auto m : {speculate_mode::off, speculate_mode::lookup, speculate_mode::draft, speculate_mode::both})
        if (name == speculate_mode_name(m)) return m;
    return fail("speculation mode '", name, "' is not one of off, lookup, draft, both");
}

status validate(const speculation_options & o, const engine & target) {
    const bool needs_draft = o.mode == speculate_mode::draft || o.mode == speculate_mode::both;
    if (needs_draft && (!o.draft || !o.draft_seq))
        return fail("speculation: mode ", speculate_mode_name(o.mode), " needs a draft model");
    if (needs_draft && o.draft->mdl().hp().n_vocab != target.mdl().hp().n_vocab)
        return fail("speculation: the draft model has ", o.draft->mdl().hp().n_vocab, " tokens in its vocabulary, the model ",
                    target.mdl().hp().n_vocab, "; a draft must share the vocabulary");
    if (o.n_draft_max < 1 || o.n_draft_max >= target.n_batch())
        return fail("speculation: n_draft_max ", o.n_draft_max, " is outside [1, ", target.n_batch() - 1, "]");
    if (o.n_draft_start < 1 || o.n_draft_start > o.n_draft_max)
        return fail("speculation: n_draft_start ", o.n_draft_start, " is outside [1, n_draft_max = ", o.n_draft_max, "]");
    if (o.ngram_min < 1 || o.ngram_max < o.ngram_min)
        return fail("speculation: the n-gram range [", o.ngram_min, ", ", o.ngram_max, "] is empty or starts below 1");
    return {};
}

std::vector<token_id> lookup_proposal(std::span<const token_id> history, int32_t n_max, int32_t ngram_max,
                                      int32_t ngram_min) {
    const auto n = static_cast<int64_t>(history.size());
    for (int64_t g = std::min<int64_t>(ngram_max, n - 1); g >= ngram_min; --g) {
        const auto pattern = history.last(static_cast<size_t>(g));
        // An occurrence at [i, i + g) with at least one token after it, latest first.
        for (int64_t i = n - g - 1; i >= 0; --i) {
            if (!std::equal(pattern.begin(), pattern.end(), history.begin() + i)) continue;
            const int64_t from = i + g, to = std::min(from + n_max, n);
            return {history.begin() + from, history.begin() + to};
        }
    }
    return {};
}

token_stepper::token_stepper(engine & target, sequence & seq, speculation_options opts)
    : target_(target), seq_(seq), opts_(opts), n_draft_(opts.n_draft_start) {}

std::vector<token_id> token_stepper::draft_proposal(std::span<const token_id> history, int32_t n_max,
                                                    const std::stop_token & stop) {
    const auto t0 = std::chrono::steady_clock::now();
    engine & d = *opts_.draft;
    sequence & ds = *opts_.draft_seq;
    std::vector<token_id> out;
    // Keep what the draft sequence shares with the history; evaluate at least the last token.
    const size_t common = std::min(common_prefix(ds.tokens, history), history.size() - 1);
    ds.cache.set_n_pos(static_cast<int32_t>(common));
    ds.tokens.resize(common);
    ds.n_batch_rows = std::min(ds.n_batch_rows, static_cast<int32_t>(common));
    n_max = static_cast<int32_t>(std::min<int64_t>(n_max, ds.cache.n_ctx() - static_cast<int64_t>(history.size())));
    if (n_max > 0) {
        const auto rest = history.subspan(common);
        // Stopped (or failed), what was evaluated stays for the next call; a draft that fails
        // costs only its guesses.
        const auto s = d.eval(ds.cache, rest, draft_logits_, false, stop);
        const auto kept = static_cast<size_t>(ds.cache.n_pos()) - common;
        ds.tokens.insert(ds.tokens.end(), rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(kept));
        if (kept >= 2 && ds.n_batch_rows == static_cast<int32_t>(common)) ds.n_batch_rows = ds.cache.n_pos();
        if (s) {
            for (int32_t i = 0; i < n_max; ++i) {
                out.push_back(sampler::argmax(draft_logits_));
                if (i + 1 < n_max && !decode_one(d, ds, out.back(), draft_logits_, stop)) break;
            }
        }
    }
    stats_.t_draft_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

std::vector<token_id> token_stepper::propose(token_id tok, int32_t n_max, const std::stop_token & stop) {
    history_.assign(seq_.tokens.begin(), seq_.tokens.end());
    history_.push_back(tok);
    std::vector<token_id> g;
    if (opts_.mode == speculate_mode::lookup || opts_.mode == speculate_mode::both)
        g = lookup_proposal(history_, n_max, opts_.ngram_max, opts_.ngram_min);
    if (g.empty() && (opts_.mode == speculate_mode::draft || opts_.mode == speculate_mode::both))
        g = draft_proposal(history_, n_max, stop);
    return g;
}

void token_stepper::end_batch() {
    if (guesses_.empty()) return;
    n_draft_ = n_used_ == guesses_.size() ? std::min(opts_.n_draft_max, 2 * n_draft_)
                                          : std::max<int32_t>(1, static_cast<int32_t>(n_used_) + 1);
    guesses_.clear();
    n_used_ = 0;
}

status token_stepper::step(token_id tok, std::vector<float> & logits, std::stop_token stop) {
    const auto n_vocab = static_cast<size_t>(target_.mdl().hp().n_vocab);
    const int32_t n_pos = seq_.cache.n_pos();
    if (n_used_ < guesses_.size() && guesses_[n_used_] == tok) {   // computed ahead
        ++n_used_;
        ++stats_.n_accepted;
        ++stats_.n_tokens;
        seq_.cache.set_n_pos(n_pos + 1);
        seq_.tokens.push_back(tok);
        const auto row = rows_.begin() + static_cast<std::ptrdiff_t>(n_used_ * n_vocab);
        logits.assign(row, row + static_cast<std::ptrdiff_t>(n_vocab));
        return {};
    }
    if (n_used_ < guesses_.size()) ++stats_.n_rejected;
    end_batch();
    const int32_t n_max = std::min(n_draft_, seq_.cache.n_ctx() - n_pos - 1);
    std::vector<token_id> g;
    if (opts_.mode != speculate_mode::off && n_max > 0) g = propose(tok, n_max, stop);
    status s;
    if (g.empty()) {
        const token_id one[1] = {tok};
        s = target_.eval(seq_.cache, one, logits, false, stop);
    } else {
        std::vector<token_id> batch{tok};
        batch.insert(batch.end(), g.begin(), g.end());
        s = target_.eval_steps(seq_.cache, batch, rows_, stop);
    }
    if (!s) {
        seq_.cache.set_n_pos(n_pos);   // a stop may have left some of the batch counted
        return s;
    }
    seq_.cache.set_n_pos(n_pos + 1);
    seq_.tokens.push_back(tok);
    ++stats_.n_target_passes;
    ++stats_.n_tokens;
    stats_.n_drafted += static_cast<int32_t>(g.size());
    if (!g.empty()) logits.assign(rows_.begin(), rows_.begin() + static_cast<std::ptrdiff_t>(n_vocab));
    guesses_ = std::move(g);
    return {};
}

}  // namespace hearth::inference
