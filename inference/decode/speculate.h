// speculate: speculative decoding for the decode loop. A proposer guesses the tokens that come
// after the one just chosen, the target model evaluates that token and the guesses in one batch
// (engine::eval_steps: each row summed as a decode step sums it), and the next choices of the
// decode loop take their logits from that batch for as long as they equal the guesses; the
// first choice that differs drops the rest (the cache's n_pos goes back; rows past it are
// overwritten later). Two proposers:
//   lookup: the longest n-gram ending the sequence (prompt and generated tokens: the text after
//           the cursor, the extra-context pieces, the document) found earlier in it; the
//           tokens that followed its latest occurrence are the guess. No model, no cost.
//   draft:  a small model of the same vocabulary decodes greedily on its own sequence.
//   both:   lookup where it finds a match, else the draft model.
// Why the output does not change: the decode loop still samples every token from the target's
// logits, which are bit for bit those of plain decoding, with the sampler state it would have.
// A guess only decides which logits get computed ahead. Greedy output is therefore identical,
// and sampled output is too with the same seed (so distributed as without speculation). With
// a deterministic proposal this is the standard rejection rule: a guess d is kept with
// probability p(d), and otherwise the token comes from p without d, renormalised.
// The guess length adapts: doubled after a batch whose guesses were all kept, else one more than
// the number kept.
// Thread-safety: runs on the compute worker, which owns both engines and sequences.
#pragma once

#include <cstdint>
#include <span>
#include <stop_token>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "inference/forward/engine.h"
#include "inference/session/sequence.h"

namespace hearth::inference {

enum class speculate_mode { off, lookup, draft, both };
std::string_view speculate_mode_name(speculate_mode m);
// "off", "lookup", "draft", "both"; the error lists them.
result<speculate_mode> parse_speculate_mode(std::string_view name);

struct speculation_options {
    speculate_mode mode = speculate_mode::off;
    // draft and both: the draft model's engine and its own sequence (kept between calls, so a
    // warm draft sequence reuses its common prefix). Its context must hold the target's tokens.
    engine * draft = nullptr;
    sequence * draft_seq = nullptr;
    int32_t n_draft_max = 16;     // guesses per batch at most
    int32_t n_draft_start = 4;    // the first batch's guesses
    int32_t ngram_max = 4;        // lookup: the longest n-gram tried first
    int32_t ngram_min = 2;        // lookup: the shortest one accepted
};

// Checks the options against the target: the mode's draft given, the vocabularies the same size,
// the ranges. The message names the field.
status validate(const speculation_options & o, const engine & target);

struct speculation_stats {
    int32_t n_target_passes = 0;  // forward passes of the target while generating
    int32_t n_drafted = 0;        // tokens guessed and verified (computed ahead)
    int32_t n_accepted = 0;       // guesses the decode loop chose
    int32_t n_rejected = 0;       // guesses it chose another token for (the rest of their batch dropped)
    int32_t n_tokens = 0;         // tokens appended through the stepper
    double t_draft_ms = 0;        // time in the draft model
    // Of the guesses the decode loop reached, the share kept (guesses past the end of the
    // generation were computed, n_drafted, but never judged).
    double acceptance() const {
        return n_accepted + n_rejected ? static_cast<double>(n_accepted) / (n_accepted + n_rejected) : 0;
    }
    double tokens_per_pass() const { return n_target_passes ? static_cast<double>(n_tokens) / n_target_passes : 0; }
};

// The lookup guess: after the last n tokens of `history` (n from ngram_max down to ngram_min),
// the tokens that followed the latest earlier occurrence of those n, up to n_max of them.
std::vector<token_id> lookup_proposal(std::span<const token_id> history, int32_t n_max, int32_t ngram_max,
                                      int32_t ngram_min);

// Appends tokens to a sequence and leaves the logits after each, speculating ahead per the
// options. Between calls the sequence holds exactly the tokens appended (n_pos == tokens.size()).
class token_stepper {
public:
    token_stepper(engine & target, sequence & seq, speculation_options opts);

    // Appends tok and leaves the logits after it: from the batch already computed when tok is the
    // guess that comes next, else from a new target pass over tok and the guesses after it.
    // Errors as engine::eval (the sequence is then unchanged).
    status step(token_id tok, std::vector<float> & logits, std::stop_token stop = {});

    const speculation_stats & stats() const { return stats_; }

private:
    // A stop requested ends a draft model's work within a layer (fewer guesses, or none).
    std::vector<token_id> propose(token_id tok, int32_t n_max, const std::stop_token & stop);
    std::vector<token_id> draft_proposal(std::span<const token_id> history, int32_t n_max, const std::stop_token & stop);
    void end_batch();   // adapts the guess length to what the batch kept

    engine & target_;
    sequence & seq_;
    speculation_options opts_;
    speculation_stats stats_;
    std::vector<token_id> guesses_;   // the batch's guesses, after the token it was run for
    std::vector<float> rows_;         // [1 + guesses_.size()][n_vocab] the batch's logits
    size_t n_used_ = 0;               // guesses taken so far
    int32_t n_draft_ = 0;             // guesses to ask for next
    std::vector<float> draft_logits_;
    std::vector<token_id> history_;   // scratch: the sequence and the token being appended
};

}  // namespace hearth::inference
