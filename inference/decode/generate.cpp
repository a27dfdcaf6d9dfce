#include "inference/decode/generate.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace hearth::inference {

std::string_view finish_reason_name(finish_reason r) {
    switch (r) {
        case finish_reason::end_of_generation: return "end_of_generation";
        case finish_reason::max_tokens: return "max_tokens";
        case finish_reason::time_budget: return "time_budget";
        case finish_reason::time_cap: return "time_cap";
        case finish_reason::stop_rule: return "stop_rule";
        case finish_reason::cancelled: return "cancelled";
        case finish_reason::context_full: return "context_full";
    }
    return "unknown";
}

size_t utf8_complete_prefix(std::string_view s) {
    // Look back at most 3 bytes for the lead byte of a sequence that is not finished yet.
    const size_t n = s.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        const auto c = static_cast<unsigned char>(s[n - back]);
        if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
        size_t need = 1;
        if ((c & 0xE0) == 0xC0) need = 2;
        else if ((c & 0xF0) == 0xE0) need = 3;
        else if ((c & 0xF8) == 0xF0) need = 4;
        return back < need ? n - back : n;
    }
    return n;  // ASCII tail, or invalid bytes that will never complete: pass them on
}

size_t finished_line_end(std::string_view text, size_t from) {
    const size_t content = text.find_first_not_of(" \t\r\n");
    if (content == std::string_view::npos) return std::string_view::npos;
    const size_t nl = text.find('\n', std::max(from, content));
    return nl == std::string_view::npos ? std::string_view::npos : nl + 1;
}

namespace {

// The start of the line in progress at the end of text; a blank one counts as the end of
// the line before it (that line is finished).
size_t current_line_from(std::string_view text) {
    const size_t nl = text.rfind('\n');
    if (nl == std::string_view::npos) return 0;
    const bool blank = text.find_first_not_of(" \t\r", nl + 1) == std::string_view::npos;
    return blank ? nl : nl + 1;
}

double log_softmax_at(const std::vector<float> & logits, token_id tok) {
    const float mx = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float l : logits) sum += std::exp(static_cast<double>(l - mx));
    return static_cast<double>(logits[tok] - mx) - std::log(sum);
}

}  // namespace

result<generation_result> generate(engine & eng, const tokenizer::vocab & vocab, sequence & seq,
                                   std::vector<float> & logits, const generation_params & params,
                                   std::stop_token stop, const std::function<void(std::string_view)> & on_piece) {
    if (auto s = validate(params.sampling); !s) return s.error();
    if (params.n_predict < 0) return fail("generate: n_predict ", params.n_predict, " is negative");
    if (auto s = validate(params.speculation, eng); !s) return s.error();
    const auto t0 = std::chrono::steady_clock::now();
    sampler smp(params.sampling);
    for (token_id t : seq.tokens) smp.accept(t);

    token_stepper stepper(eng, seq, params.speculation);
    generation_result out;
    size_t streamed = 0;
    auto finish = [&](finish_reason why, size_t keep) {
        out.finish = why;
        out.speculation = stepper.stats();
        out.text.resize(std::min(keep, out.text.size()));
        if (on_piece && out.text.size() > streamed) on_piece(std::string_view(out.text).substr(streamed));
        out.t_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };

    // Once the budget is over (with a cap above it): the line in progress started here.
    std::optional<size_t> finishing_from;
    const bool can_finish_line = params.time_cap > params.time_budget;
    for (int32_t i = 0;; ++i) {
        if (stop.stop_requested()) { finish(finish_reason::cancelled, out.text.size()); break; }
        if (i >= params.n_predict) { finish(finish_reason::max_tokens, out.text.size()); break; }
        // The first token always comes: the user waited for the prompt.
        if (i > 0 && params.time_budget.count() > 0) {
            const auto elapsed = std::chrono::steady_clock::now() - t0;
            if (elapsed >= params.time_budget && !can_finish_line) {
                finish(finish_reason::time_budget, out.text.size());
                break;
            }
            if (elapsed >= params.time_budget && !finishing_from) {
                finishing_from = current_line_from(out.text);
                if (const size_t end = finished_line_end(out.text, *finishing_from); end != std::string::npos) {
                    finish(finish_reason::time_budget, end);
                    break;
                }
            }
            if (can_finish_line && elapsed >= params.time_cap) {
                // The finished lines, if any; else the unfinished first line is all there is.
                const size_t end = out.text.empty() ? 0 : finished_line_end(out.text, 0);
                size_t keep = out.text.size();
                if (end != std::string::npos && end < out.text.size()) {
                    const size_t last = out.text.rfind('\n');
                    keep = std::max(end, last + 1);
                }
                finish(finish_reason::time_cap, keep);
                break;
            }
        }
        const token_id tok = smp.sample(logits);
        if (vocab.is_eog(tok) || std::find(params.end_tokens.begin(), params.end_tokens.end(), tok) != params.end_tokens.end()) {
            finish(finish_reason::end_of_generation, out.text.size());
            break;
        }
        out.sum_logprob += log_softmax_at(logits, tok);
        smp.accept(tok);
        out.tokens.push_back(tok);
        const bool rendered = std::find(params.rendered_tokens.begin(), params.rendered_tokens.end(), tok) != params.rendered_tokens.end();
        out.text += vocab.piece(tok, rendered);

        size_t cut = std::string::npos;
        for (const auto & s : params.stop_strings) {
            const size_t at = out.text.find(s);
            if (at != std::string::npos) cut = std::min(cut, at);
        }
        if (cut == std::string::npos && params.rule) cut = params.rule(out.text);
        if (cut != std::string::npos) { finish(finish_reason::stop_rule, cut); break; }
        if (finishing_from) {
            if (const size_t end = finished_line_end(out.text, *finishing_from); end != std::string::npos) {
                finish(finish_reason::time_budget, end);
                break;
            }
        }

        // Stream what is certain: whole characters, and nothing a stop string might still claim.
        size_t safe = utf8_complete_prefix(out.text);
        for (const auto & s : params.stop_strings)
            for (size_t k = std::min(s.size() - 1, out.text.size()); k > 0; --k)
                if (out.text.compare(out.text.size() - k, k, s, 0, k) == 0) { safe = std::min(safe, out.text.size() - k); break; }
        if (on_piece && safe > streamed) {
            on_piece(std::string_view(out.text).substr(streamed, safe - streamed));
            streamed = safe;
        }

        if (seq.cache.n_pos() >= seq.cache.n_ctx()) { finish(finish_reason::context_full, out.text.size()); break; }
        if (auto s = stepper.step(tok, logits, stop); !s) {
            if (!stop.stop_requested()) return s.error();
            finish(finish_reason::cancelled, out.text.size());   // stopped between two layers
            break;
        }
    }
    return out;
}

}  // namespace hearth::inference
