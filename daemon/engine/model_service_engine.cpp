// The model_service behind the daemon: the inference engine with one KV slot per document
// (and per chat) in a session cache, FIM prompts from the model's own tokens, and the line
// rules of inline completion.
#include <algorithm>
#include <chrono>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "daemon/engine/memory_limit.h"
#include "daemon/engine/model_service.h"
#include "inference/decode/completion_rules.h"
#include "inference/decode/draft_model.h"
#include "inference/decode/generate.h"
#include "inference/load/loaded_model.h"
#include "inference/load/model_info.h"
#include "inference/prompt/fim.h"
#include "inference/prompt/next_edit_format.h"
#include "inference/prompt/reasoning_filter.h"
#include "inference/session/session_cache.h"
#include "inference/session/slot_store.h"

namespace hearth::daemon {
namespace {

using inference::token_id;

stop_reason to_stop_reason(inference::finish_reason r) {
    switch (r) {
        case inference::finish_reason::end_of_generation: return stop_reason::end_of_generation;
        case inference::finish_reason::max_tokens: return stop_reason::max_tokens;
        case inference::finish_reason::context_full: return stop_reason::max_tokens;
        case inference::finish_reason::time_budget: return stop_reason::time_budget;
        case inference::finish_reason::time_cap: return stop_reason::time_cap;
        case inference::finish_reason::stop_rule: return stop_reason::stop_rule;
        case inference::finish_reason::cancelled: return stop_reason::cancelled;
    }
    return stop_reason::end_of_generation;
}

// One generation's tokens, time and speculation figures added to a request's timings.
void add_generation(generation_timings & t, const inference::generation_result & gen) {
    t.n_generated += static_cast<int32_t>(gen.tokens.size());
    t.t_generate_ms += gen.t_ms;
    t.n_drafted += gen.speculation.n_drafted;
    t.n_draft_accepted += gen.speculation.n_accepted;
}

// The byte offset nearest `at` (not past it, where `down`; else not before it) that starts a
// UTF-8 character, so a cut never splits one.
size_t char_boundary(const std::string & s, size_t at, bool down) {
    at = std::min(at, s.size());
    while (at > 0 && at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) down ? --at : ++at;
    return at;
}

// Drops the fewest oldest chunks of in.extra after which `fits` holds (all of them if it never
// does), found by bisection: a ring of thousands of chunks costs a few tokenizations, not one
// per chunk. `fits` must not turn false as more chunks go. Returns how many were dropped.
template <class fits_fn>
size_t drop_oldest_chunks(inference::fim_input & in, const fits_fn & fits) {
    size_t lo = 0, hi = in.extra.size();   // fits after dropping hi (none left: it must); unknown at lo
    inference::fim_input t = in;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        t.extra.assign(in.extra.begin() + static_cast<std::ptrdiff_t>(mid), in.extra.end());
        if (fits(t)) hi = mid;
        else lo = mid + 1;
    }
    in.extra.erase(in.extra.begin(), in.extra.begin() + static_cast<std::ptrdiff_t>(hi));
    return hi;
}

// Fits the prompt into max_tokens: the other files' chunks go first, oldest first (as
// llama-server keeps the newest extra context), each counted in *n_extra_dropped; then the
// window loses text at its far ends: prefix lines from the top, suffix lines from the bottom,
// keeping the prefix about 3x the suffix (the text before the cursor says more about what
// comes next). A line longer than what fits is cut, never dropped whole: the prefix keeps its
// end, nearest the cursor, the suffix its start.
result<std::vector<token_id>> fit_fim_prompt(const inference::tokenizer::vocab & v, inference::fim_input in,
                                             size_t max_tokens, int32_t * n_extra_dropped = nullptr) {
    if (!inference::has_fim(v)) in.suffix.clear();   // a prefix-only prompt: the suffix costs nothing
    auto prompt = inference::build_completion_prompt(v, in);
    if (prompt && prompt->size() > max_tokens && !in.extra.empty()) {
        const size_t k = drop_oldest_chunks(in, [&](const inference::fim_input & t) {
            auto p = inference::build_completion_prompt(v, t);
            return p && p->size() <= max_tokens;
        });
        if (n_extra_dropped) *n_extra_dropped += static_cast<int32_t>(k);
        prompt = inference::build_completion_prompt(v, in);
    }
    for (int round = 0; round < 64; ++round) {
        if (!prompt) return prompt.error();
        if (prompt->size() <= max_tokens) return prompt;
        const double over = static_cast<double>(prompt->size()) / static_cast<double>(max_tokens);
        const bool cut_prefix = in.prefix.size() >= 3 * in.suffix.size();
        std::string & part = cut_prefix ? in.prefix : in.suffix;
        if (part.empty()) break;
        // Keep a little less than the share that fits (tokens are not spread evenly), at least a byte less.
        const size_t keep = std::min(part.size() - 1, static_cast<size_t>(static_cast<double>(part.size()) / over * 0.9));
        if (cut_prefix) {
            // From the first line start within the kept end; a line longer than that is cut inside.
            const size_t from = part.size() - keep;
            const size_t nl = part.find('\n', from == 0 ? 0 : from - 1);
            part.erase(0, nl != std::string::npos && nl + 1 < part.size() ? nl + 1 : char_boundary(part, from, false));
        } else {
            const size_t nl = keep == 0 ? std::string::npos : part.rfind('\n', keep - 1);
            part.resize(nl != std::string::npos && nl > 0 ? nl + 1 : char_boundary(part, keep, true));
        }
        prompt = inference::build_completion_prompt(v, in);
    }
    if (!prompt) return prompt.error();
    return fail("the completion window does not fit the context of ", max_tokens, " tokens");
}

// One step of shortening the window for the prompt budget (see shorten_for_prompt_budget):
// false when it is at its floor.
constexpr int k_shorten_lines = 8;         // prefix lines dropped from the top per step
constexpr int k_min_prefix_lines = 8;      // lines kept before the cursor's line
constexpr int k_min_suffix_lines = 2;      // lines kept after it
bool drop_far_lines(inference::fim_input & in) {
    if (!in.extra.empty()) {
        in.extra.clear();
        return true;
    }
    const auto n_prefix = static_cast<int>(std::count(in.prefix.begin(), in.prefix.end(), '\n'));
    const auto n_suffix = static_cast<int>(std::count(in.suffix.begin(), in.suffix.end(), '\n')) - 1;
    if (n_suffix > k_min_suffix_lines && n_suffix * 4 > n_prefix) {
        // The suffix's last line (and its newline) go: cut after the newline before it.
        const size_t last = in.suffix.rfind('\n', in.suffix.size() - 2);
        in.suffix.resize(last + 1);
        return true;
    }
    if (n_prefix <= k_min_prefix_lines) return false;
    size_t at = 0;
    for (int i = 0; i < std::min(k_shorten_lines, n_prefix - k_min_prefix_lines); ++i) at = in.prefix.find('\n', at) + 1;
    in.prefix.erase(0, at);
    return true;
}

class engine_model_service final : public model_service {
public:
    engine_model_service(std::unique_ptr<inference::loaded_model> lm, uint64_t kv_budget, const memory_limit & limit,
                         std::unique_ptr<inference::slot_store> store, uint64_t slot_disk_budget,
                         inference::speculate_mode speculate, std::unique_ptr<inference::draft_model> draft)
        : lm_(std::move(lm)), sessions_(lm_->eng(), lm_->cache_types(), lm_->n_ctx(), kv_budget),
          store_(std::move(store)), slot_disk_budget_(slot_disk_budget), speculate_(speculate), draft_(std::move(draft)) {
        // One draft sequence for every document: it keeps the common prefix of consecutive
        // completions, which is what the next keystroke in the same file shares.
        if (draft_) draft_seq_.emplace(draft_->eng().make_cache(lm_->cache_types(), lm_->n_ctx()));
        if (store_) sessions_.attach_store(store_.get());
        base_status_.loaded = true;
        base_status_.model_name = lm_->name();
        base_status_.model_path = lm_->path();
        base_status_.architecture = lm_->mdl().hp().arch;
        base_status_.next_edit_format = std::string(inference::next_edit_family_name(lm_->next_edit().family));
        base_status_.mapped_bytes = lm_->file().file_size();
        for (const auto & t : lm_->file().tensors()) base_status_.n_params += static_cast<uint64_t>(t.n_elements());
        base_status_.n_ctx = lm_->n_ctx();
        base_status_.cache_type = inference::kv_types_name(lm_->cache_types());
        base_status_.kv_budget_bytes = kv_budget;
        base_status_.memory_limit_bytes = limit.bytes;
        base_status_.memory_limit_source = limit.source;
        const uint64_t full_slot = sessions_.bytes_for_positions(lm_->n_ctx());
        base_status_.n_slots_max = static_cast<int32_t>(full_slot ? kv_budget / full_slot : 0);
        base_status_.n_threads = lm_->pool().n_threads();
        base_status_.offload = offload_of(*lm_);
        publish({});
    }

    result<completion> complete(const fim_request & req, std::stop_token stop, const piece_callback & on_piece) override {
        if (req.n_predict < 1) return fail("n_predict ", req.n_predict, " is below 1");
        if (req.n_candidates < 1 || req.n_candidates > 8) return fail("n_candidates ", req.n_candidates, " is outside [1, 8]");
        const auto & voc = lm_->vocab();
        inference::fim_input in = fim_input_of(req);
        const size_t room = prompt_room(req);
        int32_t n_extra_dropped = 0;
        auto prompt = fit_fim_prompt(voc, in, room, &n_extra_dropped);
        if (!prompt) return prompt.error();
        n_extra_dropped += limit_cold_extra(req, in, room, *prompt);
        // Generation stops at the context's end, as llama-server's does, however many tokens were asked for.
        const auto n_predict_for = [&](const std::vector<token_id> & p) {
            return std::min(req.n_predict, lm_->n_ctx() - static_cast<int32_t>(p.size()));
        };
        // A warm-up is shortened as a request arriving now would be: the request then finds
        // the same window, whose rows the warm-up left in the slot keep it from being shortened
        // further (the budget counts only what the slot lacks).
        const int shortened = shorten_for_prompt_budget(req, in, room, *prompt);
        if (req.prefill_only) return warm_up(req, *prompt, n_predict_for(*prompt), stop);
        if (shortened > 0) ++windows_shortened_;
        const int32_t n_predict = n_predict_for(*prompt);

        // Invoked's extra candidates share one more generation budget after the first.
        std::chrono::steady_clock::time_point extra_deadline;
        const auto mode = req.mode == completion_mode::multi_line ? inference::line_mode::multi_line
                                                                   : inference::line_mode::single_line;
        completion out;
        out.timings.n_extra_dropped = n_extra_dropped;
        const int32_t cursor = cursor_in(*prompt);
        for (int32_t c = 0; c < req.n_candidates && !stop.stop_requested(); ++c) {
            const std::string slot = sessions_.pick_slot(req.uri, *prompt, req.chunk_reuse_min, req.slots_per_document, cursor);
            std::vector<float> logits;
            inference::sequence * seq = nullptr;
            auto pf = prefill_slot(slot, static_cast<int32_t>(prompt->size()) + n_predict, *prompt, logits,
                                   inference::prefill_options{true, req.chunk_reuse_min, stop, cursor}, seq);
            if (!pf) return pf.error();
            out.timings.n_evaluated += pf->n_evaluated;
            if (pf->stopped) break;   // cancelled mid-prompt: the worker is free at once
            if (c == 0) {
                out.timings.n_prompt_tokens = pf->n_prompt;
                out.timings.n_cached_tokens = pf->n_reused;
                out.timings.n_shifted_tokens = pf->n_shifted;
                out.timings.n_window_shortened = shortened;
                measure_prompt_speed(*pf);
            }
            out.timings.t_prompt_ms += pf->t_ms;

            inference::generation_params params;
            params.n_predict = n_predict;
            // The generation's budget starts now, whatever the prompt took: the user has waited
            // for it, and a line within reach is finished (up to the cap), never thrown away.
            params.time_budget = req.time_budget;
            params.time_cap = req.time_cap;
            if (c > 0) {
                const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(extra_deadline - std::chrono::steady_clock::now());
                if (left.count() <= 0) break;
                params.time_budget = left;
                params.time_cap = left + std::max(std::chrono::milliseconds(0), req.time_cap - req.time_budget);
            }
            // The first candidate is greedy (what an automatic suggestion shows); only the extra
            // candidates of an Invoked request sample, to differ from it.
            params.sampling.temperature = c == 0 ? 0.0f : std::max(req.temperature, 0.7f);
            params.sampling.seed = req.seed + static_cast<uint64_t>(c);
            params.rule = inference::make_completion_rule(mode, req.prefix, req.suffix);
            params.end_tokens = inference::fim_end_tokens(voc);
            params.speculation = inference::make_speculation(speculate_, draft_.get(), draft_seq_ ? &*draft_seq_ : nullptr);
            auto gen = inference::generate(lm_->eng(), voc, *seq, logits, params, stop,
                                           c == 0 ? on_piece : piece_callback{});
            if (!gen) return gen.error();
            if (c == 0 && req.retry_repeated_line && mode == inference::line_mode::single_line &&
                inference::repeats_cursor_line(req.prefix, req.suffix, gen->text)) {
                auto again = retry_without_repeat(req, *prompt, *seq, *gen, params, stop, out.timings);
                if (!again) return again.error();
                if (*again) {
                    add_generation(out.timings, *gen);
                    gen = std::move(**again);
                }
            }
            if (c == 0) extra_deadline = std::chrono::steady_clock::now() + req.time_budget;
            if (gen->finish == inference::finish_reason::time_cap)
                spdlog::debug("completion {}: candidate {} cut unfinished by the {} ms cap after {} tokens", req.uri, c,
                              params.time_cap.count(), gen->tokens.size());
            add_generation(out.timings, *gen);
            const bool duplicate = std::any_of(out.candidates.begin(), out.candidates.end(),
                                               [&](const auto & k) { return k.text == gen->text; });
            if (!duplicate && !gen->text.empty()) {
                const double mean = gen->tokens.empty() ? 0 : gen->sum_logprob / static_cast<double>(gen->tokens.size());
                out.candidates.push_back({gen->text, mean, to_stop_reason(gen->finish)});
            }
            if (gen->finish == inference::finish_reason::cancelled) break;
        }
        // The first (greedy) candidate stays first; the sampled ones are ranked by likelihood.
        if (out.candidates.size() > 2)
            std::stable_sort(out.candidates.begin() + 1, out.candidates.end(),
                             [](const auto & a, const auto & b) { return a.mean_logprob > b.mean_logprob; });
        count_burst(req.uri, out.timings, stop.stop_requested());
        publish(out.timings);
        return out;
    }

    // The prompt into the document's slot, nothing generated (fim_request::prefill_only). A
    // stop (a request arrived: the scheduler preempts warm-ups) keeps the positions computed so
    // far, which that request or the next one here reuses.
    result<completion> warm_up(const fim_request & req, const std::vector<token_id> & prompt, int32_t n_predict,
                               std::stop_token stop) {
        completion out;
        const int32_t cursor = cursor_in(prompt);
        const std::string slot = sessions_.pick_slot(req.uri, prompt, req.chunk_reuse_min, req.slots_per_document, cursor);
        const int32_t n_positions = static_cast<int32_t>(prompt.size()) + n_predict;
        if (!sessions_.has_room(slot, n_positions)) {
            // The slots of the files being edited stay: a warm-up never evicts.
            ++warm_ups_skipped_;
            spdlog::debug("warm-up {}: skipped, the KV budget has no room without evicting another slot", req.uri);
            publish(std::nullopt);
            return out;
        }
        std::vector<float> logits;
        inference::sequence * seq = nullptr;
        auto pf = prefill_slot(slot, n_positions, prompt, logits, inference::prefill_options{true, req.chunk_reuse_min, stop, cursor}, seq);
        if (!pf) return pf.error();
        if (!pf->stopped) measure_prompt_speed(*pf);
        ++warm_ups_;
        warm_up_tokens_ += static_cast<uint64_t>(pf->n_evaluated);
        out.timings.n_prompt_tokens = pf->n_prompt;
        out.timings.n_cached_tokens = pf->n_reused;
        out.timings.n_shifted_tokens = pf->n_shifted;
        out.timings.n_evaluated = pf->n_evaluated;
        out.timings.t_prompt_ms = pf->t_ms;
        spdlog::debug("warm-up {}: {} prompt tokens, {} cached, {} evaluated in {:.1f} ms{}", req.uri, pf->n_prompt,
                      pf->n_reused, pf->n_evaluated, pf->t_ms, pf->stopped ? " (stopped for a request)" : "");
        publish(std::nullopt);
        return out;
    }

    // Positions computed for a document by requests that were cancelled add up until one is
    // answered: that answer's n_burst_evaluated is what the typing burst cost.
    void count_burst(const std::string & uri, generation_timings & t, bool cancelled) {
        auto & pending = burst_evaluated_[uri];
        pending += t.n_evaluated;
        if (cancelled) return;
        t.n_burst_evaluated = pending;
        ++answers_;
        answer_tokens_evaluated_ += static_cast<uint64_t>(pending);
        burst_evaluated_.erase(uri);
    }

    // The greedy line repeats the line after the cursor (inference::repeats_cursor_line), which
    // the cleanup would drop, leaving nothing: the model's next choice at the token where the
    // repeat began (after the indentation both share) is the answer instead, within what is left
    // of the first's time. nullopt: no time left, nothing but whitespace to go back to, or a stop.
    result<std::optional<inference::generation_result>> retry_without_repeat(
        const fim_request & req, const std::vector<token_id> & prompt, inference::sequence & seq,
        const inference::generation_result & first, inference::generation_params params, std::stop_token stop,
        generation_timings & timings) {
        const auto & voc = lm_->vocab();
        size_t lead = 0;
        std::string lead_text;
        for (; lead < first.tokens.size(); ++lead) {
            const std::string piece = voc.piece(first.tokens[lead]);
            if (piece.find_first_not_of(" \t\r\n") != std::string::npos) break;
            lead_text += piece;
        }
        const auto spent = std::chrono::milliseconds(static_cast<int64_t>(first.t_ms));
        if (lead == first.tokens.size() || spent >= params.time_cap) return std::optional<inference::generation_result>{};
        params.time_budget = std::max(std::chrono::milliseconds(1), params.time_budget - spent);
        params.time_cap -= spent;
        params.n_predict -= static_cast<int32_t>(lead);   // the sequence was sized for the first
        std::vector<token_id> head = prompt;
        head.insert(head.end(), first.tokens.begin(), first.tokens.begin() + static_cast<std::ptrdiff_t>(lead));
        std::vector<float> logits;
        auto pf = inference::prefill(lm_->eng(), seq, head, logits, inference::prefill_options{true, req.chunk_reuse_min, stop, cursor_in(head)});
        if (!pf) return pf.error();
        sessions_.record(*pf);
        timings.t_prompt_ms += pf->t_ms;
        timings.n_evaluated += pf->n_evaluated;
        if (pf->stopped) return std::optional<inference::generation_result>{};
        logits[static_cast<size_t>(first.tokens[lead])] = -std::numeric_limits<float>::infinity();
        params.speculation = inference::make_speculation(speculate_, draft_.get(), draft_seq_ ? &*draft_seq_ : nullptr);
        auto gen = inference::generate(lm_->eng(), voc, seq, logits, params, stop);
        if (!gen) return gen.error();
        ++repeats_retried_;
        spdlog::debug("completion {}: the line repeated the one after the cursor; again without '{}' after {} token(s): {} bytes",
                      req.uri, voc.piece(first.tokens[lead]), lead, gen->text.size());
        gen->text = lead_text + gen->text;
        return std::optional<inference::generation_result>{std::move(*gen)};
    }

    result<chat_answer> chat(const chat_request & req, std::stop_token stop, const piece_callback & on_piece) override {
        if (!lm_->chat()) return lm_->chat().error();
        if (req.n_predict < 1) return fail("n_predict ", req.n_predict, " is below 1");
        std::vector<inference::chat_turn> turns;
        for (const auto & m : req.messages) turns.push_back({m.role, m.content});
        auto text = inference::render_chat(*lm_->chat(), turns);
        if (!text) return text.error();
        const auto prompt = lm_->vocab().tokenize(*text, /*add_special=*/false, /*parse_special=*/true);
        if (static_cast<int64_t>(prompt.size()) >= lm_->n_ctx())
            return fail("the conversation (", prompt.size(), " tokens) does not fit the context of ", lm_->n_ctx(), " tokens");
        // The answer stops at the context's end, however many tokens were asked for.
        const int32_t n_predict = std::min(req.n_predict, lm_->n_ctx() - static_cast<int32_t>(prompt.size()));
        std::vector<float> logits;
        inference::sequence * seq = nullptr;
        auto pf = prefill_slot("chat:" + req.uri, static_cast<int32_t>(prompt.size()) + n_predict, prompt, logits,
                               inference::prefill_options{true, 0, stop}, seq);
        if (!pf) return pf.error();
        if (pf->stopped) {
            chat_answer out;
            out.stop = stop_reason::cancelled;
            publish(std::nullopt);
            return out;
        }
        inference::generation_params params;
        params.n_predict = n_predict;
        params.time_budget = req.time_budget;
        params.sampling.temperature = req.temperature;
        params.sampling.seed = req.seed;
        params.rendered_tokens = inference::reasoning_tokens(lm_->vocab());
        inference::reasoning_filter think(req.show_reasoning ? inference::reasoning_display::folded : inference::reasoning_display::hidden,
                                          *lm_->chat());
        const auto show = [&](std::string_view s) { if (!s.empty() && on_piece) on_piece(s); };
        auto gen = inference::generate(lm_->eng(), lm_->vocab(), *seq, logits, params, stop,
                                       [&](std::string_view piece) { show(think.push(piece)); });
        if (!gen) return gen.error();
        show(think.finish());
        chat_answer out;
        out.text = think.shown();
        out.stop = to_stop_reason(gen->finish);
        out.timings.n_prompt_tokens = pf->n_prompt;
        out.timings.n_cached_tokens = pf->n_reused;
        out.timings.t_prompt_ms = pf->t_ms;
        add_generation(out.timings, *gen);
        publish(out.timings);
        return out;
    }

    // The prompt of the model's next-edit family into the document's own next-edit slot (apart
    // from its completion slot: the two prompts share no head), then a greedy rewrite of the
    // window, bounded by the window's size. A warm-up stops after the prompt.
    result<next_edit_answer> next_edit(const next_edit_request & req, std::stop_token stop) override {
        const auto & fmt = lm_->next_edit();
        if (fmt.family == inference::next_edit_family::none) return fail("this model has no next-edit format: ", fmt.reason);
        inference::next_edit_input in{req.path, req.language_id, req.context, {}, req.window_before, req.window, req.cursor};
        for (const auto & e : req.edits) in.edits.push_back({e.line, e.original, e.updated});
        const std::optional<inference::chat_format> chat = lm_->chat() ? std::optional(*lm_->chat()) : std::nullopt;
        auto text = inference::build_next_edit_prompt(fmt.family, chat, in);
        if (!text) return text.error();
        const auto & voc = lm_->vocab();
        const auto prompt = voc.tokenize(*text, /*add_special=*/false, /*parse_special=*/true);
        const auto n_window = static_cast<double>(voc.tokenize(req.window, false, false).size());
        const int32_t n_predict = std::min(static_cast<int32_t>(n_window * (1.0 + req.max_growth)) + req.margin_tokens,
                                           lm_->n_ctx() - static_cast<int32_t>(prompt.size()));
        if (n_predict < 1) return fail("the next-edit prompt (", prompt.size(), " tokens) does not fit the context of ", lm_->n_ctx(), " tokens");
        next_edit_answer out;
        out.family = std::string(inference::next_edit_family_name(fmt.family));
        const std::string slot = "next-edit:" + req.uri;
        const int32_t n_positions = static_cast<int32_t>(prompt.size()) + n_predict;
        if (req.prefill_only && !sessions_.has_room(slot, n_positions)) {
            ++warm_ups_skipped_;   // a warm-up never evicts another slot
            publish(std::nullopt);
            return out;
        }
        std::vector<float> logits;
        inference::sequence * seq = nullptr;
        auto pf = prefill_slot(slot, n_positions, prompt, logits, inference::prefill_options{true, 0, stop}, seq);
        if (!pf) return pf.error();
        out.timings.n_prompt_tokens = pf->n_prompt;
        out.timings.n_cached_tokens = pf->n_reused;
        out.timings.n_evaluated = pf->n_evaluated;
        out.timings.t_prompt_ms = pf->t_ms;
        if (req.prefill_only) {
            ++warm_ups_;
            warm_up_tokens_ += static_cast<uint64_t>(pf->n_evaluated);
        }
        if (pf->stopped || req.prefill_only) {
            out.stop = stop_reason::cancelled;
            publish(std::nullopt);
            return out;
        }
        inference::generation_params params;
        params.n_predict = n_predict;
        params.time_budget = req.time_budget;
        params.sampling.temperature = 0.0f;
        params.stop_strings = inference::next_edit_stop_strings(fmt.family);
        for (const auto & t : inference::next_edit_end_texts(fmt.family))
            if (const token_id id = voc.find_token(t); id != inference::k_no_token) params.end_tokens.push_back(id);
        // The rewrite stops once it has made its change and copied two lines of the window again:
        // the rest of the window is taken as it is, so an edit near the cursor costs a few lines.
        params.rule = [window = req.window, prefill = std::string(inference::next_edit_prefill(in))](std::string_view text) {
            const auto r = inference::find_next_edit_resync(window, prefill + std::string(text));
            return r ? r->text_end - prefill.size() : std::string_view::npos;
        };
        params.speculation = inference::make_speculation(speculate_, draft_.get(), draft_seq_ ? &*draft_seq_ : nullptr);
        auto gen = inference::generate(lm_->eng(), voc, *seq, logits, params, stop);
        if (!gen) return gen.error();
        add_generation(out.timings, *gen);
        out.stop = to_stop_reason(gen->finish);
        const bool complete = gen->finish == inference::finish_reason::end_of_generation ||
                              gen->finish == inference::finish_reason::stop_rule;
        out.window = inference::parse_next_edit_output(fmt.family, gen->text, complete, in);
        spdlog::debug("next edit {}: {} prompt tokens ({} cached) in {:.1f} ms, {} generated in {:.1f} ms, {}", req.uri,
                      pf->n_prompt, pf->n_reused, pf->t_ms, gen->tokens.size(), gen->t_ms,
                      out.window ? "read" : "not readable");
        publish(out.timings);
        return out;
    }

    void release_document(std::string_view uri) override {
        // Written to the slot store (when on), so reopening the file starts warm.
        sessions_.evict_document(std::string(uri));
        burst_evaluated_.erase(std::string(uri));
        sessions_.evict("chat:" + std::string(uri));
        sessions_.evict("next-edit:" + std::string(uri));
        log_store_warnings();
        publish(std::nullopt);
    }

    hearth::status persist() override {
        if (!store_) return {};
        auto s = sessions_.save_all();
        log_store_warnings();
        const auto st = sessions_.stats();
        const int pruned = store_->prune(slot_disk_budget_);
        spdlog::info("KV slots: {} written to {} ({} read back this run, {} refused){}", st.n_saved, store_->dir(),
                     st.n_restored, st.n_rejected, pruned ? fmt::format("; {} old slot files pruned", pruned) : "");
        return s;
    }

    model_status status() const override {
        std::lock_guard lock(status_mutex_);
        return status_;
    }

    result<std::vector<int32_t>> tokenize(std::string_view text, bool add_special, bool parse_special) const override {
        return lm_->vocab().tokenize(text, add_special, parse_special);
    }

    result<completion_prompt> completion_prompt_text(const fim_request & req) const override {
        const auto & voc = lm_->vocab();
        inference::fim_input in = fim_input_of(req);
        const size_t room = prompt_room(req);
        auto prompt = fit_fim_prompt(voc, in, room);
        if (!prompt) return prompt.error();
        completion_prompt out;
        out.prompt = voc.detokenize(*prompt, /*remove_special=*/false, /*render_special=*/true);
        for (const token_id t : inference::fim_end_tokens(voc)) {
            const token_id one[] = {t};
            out.stop.push_back(voc.detokenize(one, false, true));
        }
        return out;
    }

    result<std::string> detokenize(std::span<const int32_t> ids) const override {
        const auto & voc = lm_->vocab();
        for (size_t i = 0; i < ids.size(); ++i)
            if (ids[i] < 0 || ids[i] >= voc.n_tokens())
                return fail("token ", i, ": id ", ids[i], " is outside the vocabulary [0, ", voc.n_tokens(), ")");
        return voc.detokenize(ids, /*remove_special=*/false, /*render_special=*/true);
    }

private:
    // The request's fill-in-the-middle input, and the tokens its prompt may take: the context
    // less the answer's share (at most half of it).
    static inference::fim_input fim_input_of(const fim_request & req) {
        inference::fim_input in;
        in.prefix = req.prefix;
        in.suffix = req.suffix;
        in.path = req.uri;
        for (const auto & c : req.extra_context) in.extra.push_back({c.uri, c.text});
        return in;
    }
    size_t prompt_room(const fim_request & req) const {
        return static_cast<size_t>(lm_->n_ctx() - std::min(lm_->n_ctx() / 2, req.n_predict));
    }

    // Where the cursor is in a FIM prompt: its suffix token (what follows was computed for the
    // text then before the cursor, so it is never moved: prefill_options::chunk_end); -1 for a
    // prompt without one (a model without FIM tokens continues the prefix: nothing follows).
    int32_t cursor_in(const std::vector<token_id> & prompt) const {
        const token_id suffix = lm_->vocab().fim_suf();
        const auto it = std::find(prompt.rbegin(), prompt.rend(), suffix);
        return it == prompt.rend() ? -1 : static_cast<int32_t>(prompt.rend() - it - 1);
    }

    // The prompt's tokens that the slot the request would get does not hold (exact prefix and
    // moved chunks reused): what prefill would evaluate.
    size_t uncached_tokens(const fim_request & req, const std::vector<token_id> & prompt) const {
        const int32_t cursor = cursor_in(prompt);
        const std::string slot = sessions_.pick_slot(req.uri, prompt, req.chunk_reuse_min, req.slots_per_document, cursor);
        return prompt.size() - std::min(prompt.size(), sessions_.reusable_positions(slot, prompt, req.chunk_reuse_min, cursor));
    }

    // Other files' chunks whose rows the slot lacks cost a request at most
    // req.max_cold_extra_tokens more than its window (the oldest chunks go first): a ring of
    // thousands of tokens arriving with a file's first request answers as fast as one without
    // it. The ring enters the slot with the client's warm-up (llama.vim's and llama.vscode's
    // n_predict 0 requests, sent while the cursor rests; no prompt budget, no limit) and, chunk by
    // chunk, where a chunk fits the limit. Returns the chunks left out.
    int32_t limit_cold_extra(const fim_request & req, inference::fim_input & in, size_t room, std::vector<token_id> & prompt) {
        if (req.max_cold_extra_tokens < 0 || req.prompt_budget.count() <= 0 || in.extra.empty()) return 0;
        inference::fim_input bare = in;
        bare.extra.clear();
        auto window = fit_fim_prompt(lm_->vocab(), bare, room);
        if (!window) return 0;
        auto uncached_fits = [&](const std::vector<token_id> & p) {
            return uncached_tokens(req, p) <= window->size() + static_cast<size_t>(req.max_cold_extra_tokens);
        };
        if (uncached_fits(prompt)) return 0;
        const auto dropped = static_cast<int32_t>(drop_oldest_chunks(in, [&](const inference::fim_input & t) {
            auto p = fit_fim_prompt(lm_->vocab(), t, room);
            return p && uncached_fits(*p);
        }));
        if (auto shorter = fit_fim_prompt(lm_->vocab(), in, room)) prompt = std::move(*shorter);
        if (dropped > 0)
            spdlog::debug("completion {}: {} of the other files' chunks left out, their rows not yet in the slot ({} kept)",
                          req.uri, dropped, in.extra.size());
        return dropped;
    }

    // Under load a cold prompt takes seconds. Where the tokens the KV slot lacks would take
    // longer than the prompt budget at the measured speed, the window loses lines at its far
    // ends (the other files' context first, then k_shorten_lines from the top, or a few from the
    // suffix's bottom while it is over a quarter of the prefix), down to a floor of lines
    // around the cursor: a shorter window is better than an answer that comes too late. The
    // prefix's top moves in steps of whole line blocks, so consecutive keystrokes share the
    // shortened head. Returns how many times the window was shortened.
    int shorten_for_prompt_budget(const fim_request & req, inference::fim_input & in, size_t room,
                                  std::vector<token_id> & prompt) {
        if (req.prompt_budget.count() <= 0 || ms_per_prompt_token_ <= 0) return 0;
        const double budget_tokens = static_cast<double>(req.prompt_budget.count()) / ms_per_prompt_token_;
        const size_t before = prompt.size();
        int rounds = 0;
        for (;;) {
            if (static_cast<double>(uncached_tokens(req, prompt)) <= budget_tokens || !drop_far_lines(in)) break;
            auto shorter = fit_fim_prompt(lm_->vocab(), in, room);
            if (!shorter) break;
            prompt = std::move(*shorter);
            ++rounds;
        }
        if (rounds > 0)
            spdlog::debug("completion {}: window shortened {} times for the {} ms prompt budget: {} -> {} tokens "
                          "({:.2f} ms per prompt token measured)", req.uri, rounds, req.prompt_budget.count(), before,
                          prompt.size(), ms_per_prompt_token_);
        return rounds;
    }

    // The prompt speed the budget is judged by: recent prefills of enough tokens (a handful
    // of tokens costs more per token than a window), smoothed, so it follows the machine's load.
    void measure_prompt_speed(const inference::prefill_stats & pf) {
        if (pf.n_evaluated < k_min_measured_tokens || pf.t_ms <= 0) return;
        const double per_token = pf.t_ms / pf.n_evaluated;
        ms_per_prompt_token_ = ms_per_prompt_token_ > 0 ? 0.5 * ms_per_prompt_token_ + 0.5 * per_token : per_token;
    }

    // Where the layers run, from the plan the model was loaded with.
    static offload_status offload_of(const inference::loaded_model & lm) {
        offload_status o;
        o.gpu_layers = lm.gpu_layers();
        o.n_layer = lm.mdl().hp().n_layer;
        o.cpu_reason = lm.cpu_reason();
        if (const auto & p = lm.offload()) {
            o.backend = p->backend;
            o.device = p->device;
            o.n_layers = p->n_layers;
            o.device_memory_bytes = p->device_bytes;
            o.weight_bytes = p->weight_bytes;
            o.planned_bytes = p->total_bytes();
            o.planned_slots = p->room.n_slots;
        }
        return o;
    }

    // A device that failed mid-run was dropped by the engine (the CPU runs every layer since):
    // said once in the log, and from then on in the status.
    void note_device_failure() {
        if (base_status_.offload.backend.empty() || lm_->eng().device()) return;
        spdlog::warn("GPU offload stopped: {}", lm_->eng().device_error());
        offload_status & o = base_status_.offload;
        o.cpu_reason = lm_->eng().device_error();
        o.backend.clear();
        o.n_layers = 0;
        o.weight_bytes = 0;
    }

    // Copies what status() reports, under the lock, so status() never waits for a generation.
    void publish(std::optional<generation_timings> last) {
        note_device_failure();
        const auto st = sessions_.stats();
        std::lock_guard lock(status_mutex_);
        status_ = base_status_;
        status_.kv_used_bytes = st.used_bytes;
        status_.n_slots = st.n_slots;
        status_.tokens_held = st.tokens_held;
        status_.cache_requests = st.n_requests;
        status_.cache_hits = st.n_hits;
        status_.tokens_reused = st.tokens_reused;
        status_.tokens_evaluated = st.tokens_evaluated;
        status_.evictions = st.n_evictions;
        status_.slots_saved = st.n_saved;
        status_.slots_restored = st.n_restored;
        status_.slots_rejected = st.n_rejected;
        status_.windows_shortened = windows_shortened_;
        status_.repeats_retried = repeats_retried_;
        status_.answers = answers_;
        status_.answer_tokens_evaluated = answer_tokens_evaluated_;
        status_.warm_ups = warm_ups_;
        status_.warm_ups_skipped = warm_ups_skipped_;
        status_.warm_up_tokens = warm_up_tokens_;
        status_.offload.kv_bytes = st.device_bytes;
        if (last) last_ = *last;
        status_.last = last_;
        const int32_t evaluated = last_.n_prompt_tokens - last_.n_cached_tokens;
        status_.prompt_tokens_per_s = last_.t_prompt_ms > 0 ? evaluated * 1000.0 / last_.t_prompt_ms : 0;
        status_.generate_tokens_per_s = last_.t_generate_ms > 0 ? last_.n_generated * 1000.0 / last_.t_generate_ms : 0;
    }

    // A slot file that was refused (wrong model, truncated, corrupted) or could not be written.
    // The prompt into the slot's sequence (held for n_positions; a slot file acquire() refused is
    // logged), its statistics recorded in the session cache's; seq is the slot's sequence after it.
    result<inference::prefill_stats> prefill_slot(const std::string & slot, int32_t n_positions,
                                                  std::span<const token_id> prompt, std::vector<float> & logits,
                                                  const inference::prefill_options & opts, inference::sequence *& seq) {
        auto acquired = sessions_.acquire(slot, n_positions);
        log_store_warnings();
        if (!acquired) return acquired.error();
        seq = *acquired;
        auto pf = inference::prefill(lm_->eng(), *seq, prompt, logits, opts);
        if (pf) sessions_.record(*pf);
        return pf;
    }

    void log_store_warnings() {
        for (const auto & w : sessions_.take_warnings()) spdlog::warn("KV slot store: {}", w);
    }

    std::unique_ptr<inference::loaded_model> lm_;
    inference::session_cache sessions_;
    std::unique_ptr<inference::slot_store> store_;   // declared after sessions_: outlives its use there
    uint64_t slot_disk_budget_;
    inference::speculate_mode speculate_;
    std::unique_ptr<inference::draft_model> draft_;
    std::optional<inference::sequence> draft_seq_;
    model_status base_status_;
    generation_timings last_;
    double ms_per_prompt_token_ = 0;   // measured (see measure_prompt_speed); 0: not yet
    uint64_t windows_shortened_ = 0;
    uint64_t repeats_retried_ = 0;
    uint64_t answers_ = 0, answer_tokens_evaluated_ = 0;
    uint64_t warm_ups_ = 0, warm_ups_skipped_ = 0, warm_up_tokens_ = 0;
    std::unordered_map<std::string, int32_t> burst_evaluated_;   // per document, since its last answer
    static constexpr int32_t k_min_measured_tokens = 32;
    mutable std::mutex status_mutex_;
    model_status status_;
};

}  // namespace

result<std::unique_ptr<model_service>> make_engine_model_service(const engine_options & opts) {
    inference::load_options lo;
    lo.model_path = opts.model_path;
    lo.n_threads = opts.n_threads;
    lo.cache_type = opts.cache_type;
    lo.chat_template = opts.chat_template;
    lo.gpu_layers = opts.gpu_layers;
    lo.gpu_probe = opts.gpu_probe;
    // `auto` keeps device room for as many full-context slots as `hearth model info` estimates for.
    lo.device_slots = static_cast<int32_t>(inference::memory_options{}.n_files);
    lo.n_ctx = opts.n_ctx;
    auto lm = inference::loaded_model::load(lo);
    if (!lm) return lm.error();
    if (const auto & plan = (*lm)->offload()) spdlog::info("GPU offload: {}", inference::describe(*plan));
    else if (opts.gpu_layers == "auto") spdlog::info("GPU offload: auto: none ({})", (*lm)->cpu_reason());
    else if (!(*lm)->cpu_reason().empty()) spdlog::warn("GPU offload (--gpu-layers {}): {}", opts.gpu_layers, (*lm)->cpu_reason());
    const memory_limit limit = process_memory_limit();
    const auto & hp = (*lm)->mdl().hp();
    const uint64_t one_slot = inference::kv_bytes_per_token((*lm)->cache_types(), hp.n_layer, hp.n_embd_kv()) *
                              static_cast<uint64_t>((*lm)->n_ctx());
    // Measured now that the model is mapped and the engine's scratch buffers exist.
    const memory_use use = process_memory_use((*lm)->file().file_size());
    uint64_t budget = opts.kv_budget_bytes;
    if (budget == 0) {
        budget = default_kv_budget(limit, use, one_slot);
    } else if (const uint64_t room = kv_room_bytes(limit, use);
               limit.kind != memory_limit_kind::physical && budget > room) {
        // A process limit is a hard wall: a budget past it would get the daemon killed.
        spdlog::warn("--kv-budget {} MiB does not fit under the memory limit of {} MiB ({}): using {} MiB",
                     budget >> 20, limit.bytes >> 20, limit.source, room >> 20);
        budget = room;
    }
    spdlog::info("memory limit {} MiB ({}); KV budget {} MiB", limit.bytes >> 20, limit.source, budget >> 20);
    auto speculate = inference::parse_speculate_mode(opts.speculate);
    if (!speculate) return fail("speculate: ", speculate.message());
    std::unique_ptr<inference::draft_model> draft;
    const bool wants_draft = *speculate == inference::speculate_mode::draft || *speculate == inference::speculate_mode::both;
    if (wants_draft && opts.draft_model.empty())
        return fail("speculate = ", opts.speculate, " needs a draft model (draft-model, --draft)");
    if (wants_draft) {
        auto d = inference::draft_model::load(opts.draft_model, (*lm)->vocab(), (*lm)->pool());
        if (!d) return fail("draft model ", opts.draft_model, ": ", d.message());
        draft = std::move(*d);
        spdlog::info("speculative decoding: {} with the draft {}", opts.speculate, opts.draft_model);
    }
    std::unique_ptr<inference::slot_store> store;
    if (!opts.slot_dir.empty()) {
        auto id = inference::identify_model(opts.model_path);
        if (!id) return id.error();
        store = std::make_unique<inference::slot_store>(opts.slot_dir, *id);
    }
    return std::unique_ptr<model_service>(
        new engine_model_service(std::move(*lm), budget, limit, std::move(store), opts.slot_disk_budget_bytes, *speculate,
                                 std::move(draft)));
}

}  // namespace hearth::daemon
