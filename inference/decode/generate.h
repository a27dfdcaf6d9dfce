// generate: the decode loop. Samples a token, checks the stop rules, streams whole UTF-8
// characters, feeds the token back, once per token. Cancellation and the time budget are
// checked once per token, never inside the kernels. The budget counts generating only (the
// prompt was evaluated before); with a cap above it, a line the budget interrupts is finished
// first, so a wait never ends in half a line.
// Thread-safety: runs on the compute worker.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "inference/decode/sampler.h"
#include "inference/decode/speculate.h"
#include "inference/session/sequence.h"
#include "inference/tokenizer/vocab.h"

namespace hearth::inference {

// time_budget: the budget ran out (with a cap: at the end of a line); time_cap: the cap cut a
// line that was still unfinished.
enum class finish_reason { end_of_generation, max_tokens, time_budget, time_cap, stop_rule, cancelled, context_full };
std::string_view finish_reason_name(finish_reason r);

// Looks at the text generated so far; returns the length to keep if generation must stop
// now (the rest is cut), or npos to go on. Used for stop strings and the line rules of
// inline completion.
using stop_rule = std::function<size_t(std::string_view text)>;

struct generation_params {
    int32_t n_predict = 64;
    // Wall time for generating, from generate()'s start; 0: no limit.
    std::chrono::milliseconds time_budget{0};
    // Above time_budget: a line the budget interrupts goes on until it ends (a newline after
    // some text), but never past this time from the start; the cap then keeps the finished
    // lines, or the unfinished first line when there are none. 0: stop when the budget ends.
    std::chrono::milliseconds time_cap{0};
    sampler_params sampling;
    std::vector<std::string> stop_strings;      // cut before the first occurrence
    // Tokens that end generation besides the vocabulary's end-of-generation set (a FIM
    // family's own, fim_end_tokens()); like those, never part of the text.
    std::vector<token_id> end_tokens;
    // Control tokens whose text is written into the output all the same (a reasoning block's
    // <think> and </think>, which reasoning_filter looks for).
    std::vector<token_id> rendered_tokens;
    stop_rule rule;                             // optional
    // Speculative decoding (speculate.h): the same tokens, fewer target passes when it guesses well.
    speculation_options speculation;
};

struct generation_result {
    std::string text;
    std::vector<token_id> tokens;
    finish_reason finish = finish_reason::end_of_generation;
    double sum_logprob = 0;       // of the sampled tokens (ranking candidates)
    double t_ms = 0;
    speculation_stats speculation;
};

// Holds back an incomplete UTF-8 sequence at the end of the text produced so far, so a
// stream never shows half a character.
size_t utf8_complete_prefix(std::string_view s);

// Where text has a finished line with some non-blank text in it or before it: the position
// after the first such line's newline at or after `from`; npos if none.
size_t finished_line_end(std::string_view text, size_t from);

// Continues `seq` from the logits of its last token. on_piece gets the streamed text. With
// params.speculation on, the result is the same (bit for bit, sampled too), the sequence left
// holds the same tokens, and result.speculation says how the guesses fared.
result<generation_result> generate(engine & eng, const tokenizer::vocab & vocab, sequence & seq,
                                   std::vector<float> & logits, const generation_params & params,
                                   std::stop_token stop = {},
                                   const std::function<void(std::string_view)> & on_piece = {});

}  // namespace hearth::inference
