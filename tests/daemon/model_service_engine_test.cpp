// The daemon's engine model service on the tiny fixture model (stories260K, F32 weights and
// cache): what complete() samples, and how its time budgets end a candidate; and chat() on a
// DeepSeek-R1-style model (tests/python/write_arch_models.py) with its reasoning filtered.
#include <chrono>
#include <stop_token>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "daemon/engine/model_service.h"
#include "daemon/pipeline/fim_window.h"
#include "tests/inference/python_util.h"

using namespace hearth::daemon;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<model_service> tiny_service(const std::string & cache_type = "f32") {
    engine_options o;
    o.model_path = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf";
    o.cache_type = cache_type;
    o.n_threads = 1;
    o.n_ctx = 512;
    auto s = make_engine_model_service(o);
    REQUIRE(s.has_value());
    return std::move(*s);
}

fim_request story_request() {
    fim_request r;
    r.uri = "file:///story.txt";
    r.prefix = "Once upon a time, there was a little girl named Lily. She";
    r.mode = completion_mode::multi_line;
    r.n_predict = 24;
    r.time_budget = 60s;
    return r;
}

}  // namespace

TEST_CASE("engine service: the first candidate is greedy whatever the temperature", "[daemon][engine]") {
    auto svc = tiny_service();
    fim_request greedy = story_request();
    greedy.temperature = 0.0f;
    auto want = svc->complete(greedy, {}, {});
    REQUIRE(want.has_value());
    REQUIRE(want->candidates.size() == 1);
    REQUIRE_FALSE(want->candidates[0].text.empty());

    // An Automatic request carries the default temperature (0.7): its one candidate is still greedy.
    fim_request automatic = story_request();
    REQUIRE(automatic.temperature > 0.5f);
    for (uint64_t seed : {42u, 7u, 1234u}) {
        automatic.seed = seed;
        auto got = svc->complete(automatic, {}, {});
        REQUIRE(got.has_value());
        REQUIRE(got->candidates.size() == 1);
        INFO("seed " << seed);
        CHECK(got->candidates[0].text == want->candidates[0].text);
    }

    // Invoked: the first candidate is the greedy one, the others are sampled and differ from it.
    fim_request invoked = story_request();
    invoked.n_candidates = 3;
    auto many = svc->complete(invoked, {}, {});
    REQUIRE(many.has_value());
    REQUIRE(many->candidates.size() >= 2);
    CHECK(many->candidates[0].text == want->candidates[0].text);
    for (size_t k = 1; k < many->candidates.size(); ++k) CHECK(many->candidates[k].text != want->candidates[0].text);
}

namespace {
// Slows the generation down from outside: the engine streams the first candidate's pieces
// to this callback, on the worker, between tokens.
piece_callback sleeping(std::chrono::milliseconds per_piece) {
    return [per_piece](std::string_view) { std::this_thread::sleep_for(per_piece); };
}

// A single-line request after a story's first line, and the greedy line the model writes there.
struct story_line {
    fim_request request;
    std::string said;   // the answer as it came
    std::string line;   // its first line with text
};

story_line greedy_story_line(model_service & svc) {
    story_line out{story_request(), {}, {}};
    out.request.mode = completion_mode::single_line;
    out.request.prefix = "Once upon a time, there was a little girl named Lily.\n";
    auto plain = svc.complete(out.request, {}, {});
    REQUIRE(plain.has_value());
    REQUIRE(plain->candidates.size() == 1);
    out.said = plain->candidates[0].text;
    const size_t from = out.said.find_first_not_of(" \n");
    REQUIRE(from != std::string::npos);
    out.line = out.said.substr(from, out.said.find('\n', from) - from);
    REQUIRE_FALSE(out.line.empty());
    return out;
}
}  // namespace

TEST_CASE("engine service: K and V in caches of different types, as asked and as reported", "[daemon][engine]") {
    auto svc = tiny_service("f16/f32");
    CHECK(svc->status().cache_type == "f16/f32");
    auto got = svc->complete(story_request(), {}, {});
    REQUIRE(got.has_value());
    REQUIRE(got->candidates.size() == 1);
    CHECK_FALSE(got->candidates[0].text.empty());
    // A slot's bytes are its K rows in f16 and its V rows in f32: 6 bytes a value where f32 takes 8.
    auto plain = tiny_service("f32");
    CHECK(plain->status().cache_type == "f32");
    REQUIRE(plain->complete(story_request(), {}, {}).has_value());
    REQUIRE(svc->status().n_slots == 1);
    REQUIRE(plain->status().n_slots == 1);
    CHECK(svc->status().kv_used_bytes * 8 == plain->status().kv_used_bytes * 6);
}

TEST_CASE("engine service: a spent budget finishes the line within reach", "[daemon][engine]") {
    auto svc = tiny_service();
    fim_request r = story_request();
    r.mode = completion_mode::single_line;
    r.time_budget = 60s;
    auto want = svc->complete(r, {}, {});
    REQUIRE(want.has_value());
    REQUIRE(want->candidates.size() == 1);
    REQUIRE(want->timings.n_generated > 4);

    // A budget that runs out after the first token: the line goes on to its end, up to the
    // cap (4 s by default; the line takes about 3 ms a token).
    r.time_budget = 1ms;
    auto got = svc->complete(r, {}, sleeping(3ms));
    REQUIRE(got.has_value());
    REQUIRE(got->candidates.size() == 1);
    CHECK(got->candidates[0].text == want->candidates[0].text);
    CHECK(got->timings.n_generated == want->timings.n_generated);

    // The cap cuts an unfinished line: what was written so far comes back, and says why.
    r.time_cap = 20ms;
    auto cut = svc->complete(r, {}, sleeping(5ms));
    REQUIRE(cut.has_value());
    REQUIRE(cut->candidates.size() == 1);
    INFO("want " << want->candidates[0].text << " (" << want->timings.n_generated << " tokens), cut "
                 << cut->candidates[0].text << " (" << cut->timings.n_generated << " tokens)");
    CHECK(cut->candidates[0].stop == stop_reason::time_cap);
    CHECK_FALSE(cut->candidates[0].text.empty());
    CHECK(want->candidates[0].text.starts_with(cut->candidates[0].text));
    CHECK(cut->timings.n_generated < want->timings.n_generated);
}

TEST_CASE("engine service: a line that repeats the one after the cursor is asked for again", "[daemon][engine]") {
    auto svc = tiny_service();
    auto [r, said, line] = greedy_story_line(*svc);

    // The cursor at the start of that very line (this model reads no suffix, so its greedy line
    // is the same): the line again would be dropped by the cleanup, leaving nothing.
    r.uri = "file:///repeat.txt";
    r.suffix = line + "\nThe end.\n";
    CHECK(trim_completion(said, r.prefix, r.suffix, r.mode).empty());
    auto got = svc->complete(r, {}, {});
    REQUIRE(got.has_value());
    REQUIRE(got->candidates.size() == 1);
    INFO("first " << said << ", again " << got->candidates[0].text);
    CHECK(got->candidates[0].text != said);
    CHECK_FALSE(trim_completion(got->candidates[0].text, r.prefix, r.suffix, r.mode).empty());
    CHECK(svc->status().repeats_retried == 1);

    // Switched off, the repeat comes back as the model wrote it.
    r.uri = "file:///off.txt";
    r.retry_repeated_line = false;
    auto off = svc->complete(r, {}, {});
    REQUIRE(off.has_value());
    REQUIRE(off->candidates.size() == 1);
    CHECK(off->candidates[0].text == said);
    CHECK(svc->status().repeats_retried == 1);
}

TEST_CASE("engine service: a retry that does not happen counts the first line's tokens once", "[daemon][engine]") {
    auto svc = tiny_service();
    auto [r, said, line] = greedy_story_line(*svc);

    // Cancelled once the repeat is written: the retry's prefill sees the stop and declines.
    r.uri = "file:///declined.txt";
    r.suffix = line + "\nThe end.\n";
    std::stop_source cancel;
    std::string written;
    int pieces = 0;
    auto got = svc->complete(r, cancel.get_token(), [&](std::string_view piece) {
        ++pieces;
        written += piece;
        if (written.find(line) != std::string::npos) cancel.request_stop();
    });
    REQUIRE(got.has_value());
    INFO("written " << written << " in " << pieces << " pieces");
    REQUIRE(written.find(line) != std::string::npos);
    CHECK(svc->status().repeats_retried == 0);
    CHECK(got->timings.n_generated == pieces);
}

TEST_CASE("engine service: a prompt over its budget is shortened, never the answer", "[daemon][engine]") {
    auto svc = tiny_service();
    std::string story;
    for (int i = 0; i < 40; ++i) story += "Lily went to the park with her mom " + std::to_string(i) + " times.\n";
    fim_request r = story_request();
    r.prefix = story + "She";
    r.prompt_budget = 60s;
    // The first request measures the prompt speed; the budget has nothing to judge by before it.
    auto first = svc->complete(r, {}, {});
    REQUIRE(first.has_value());
    CHECK(first->timings.n_window_shortened == 0);

    // Another document, cold, with a budget no full window meets: the window loses lines
    // from its top, down to its floor, and the answer still comes.
    r.uri = "file:///other.txt";
    r.prompt_budget = 1ms;
    auto second = svc->complete(r, {}, {});
    REQUIRE(second.has_value());
    CHECK(second->timings.n_window_shortened > 0);
    CHECK(second->timings.n_prompt_tokens < first->timings.n_prompt_tokens);
    REQUIRE(second->candidates.size() == 1);
    CHECK_FALSE(second->candidates[0].text.empty());
    CHECK(svc->status().windows_shortened == 1);

    // Warm: the same document again evaluates almost nothing, so the same window fits.
    auto third = svc->complete(r, {}, {});
    REQUIRE(third.has_value());
    CHECK(third->timings.n_prompt_tokens == second->timings.n_prompt_tokens);
    CHECK(third->timings.n_cached_tokens > third->timings.n_prompt_tokens / 2);
}

TEST_CASE("engine service: a DeepSeek-R1-style answer's reasoning is hidden, or folded on request", "[daemon][engine][chat]") {
    hearth::inference::testing::temp_dir dir;
    hearth::inference::testing::run_python("write_arch_models.py", hearth::inference::testing::quoted(dir.path.string()) + " > /dev/null");
    engine_options o;
    o.model_path = (dir.path / "deepseek-r1-chat.gguf").string();
    o.n_threads = 1;
    o.n_ctx = 256;
    auto svc = make_engine_model_service(o);
    REQUIRE(svc.has_value());
    auto answer = [&](bool show_reasoning) {
        chat_request req;
        req.messages = {{"user", "What is two and two?"}};
        req.n_predict = 24;
        req.show_reasoning = show_reasoning;
        std::string streamed;
        auto r = (*svc)->chat(req, {}, [&](std::string_view p) { streamed += p; });
        REQUIRE(r.has_value());
        CHECK(streamed == r->text);
        return r->text;
    };
    const std::string folded = answer(true), hidden = answer(false);
    // The prompt opened the block: folded, the answer starts with it; hidden, only what follows
    // the block is left, the same text as after the folded one.
    CHECK(folded.rfind("<details><summary>Reasoning</summary>\n\n", 0) == 0);
    CHECK(folded.size() > hidden.size());
    CHECK(folded.compare(folded.size() - hidden.size(), hidden.size(), hidden) == 0);
    CHECK(hidden.find("<details>") == std::string::npos);
}

TEST_CASE("engine service: speculation (lookup, a draft, both) gives the plain answers", "[daemon][engine][speculate]") {
    // A prompt that repeats itself, so lookup finds n-grams to guess from.
    fim_request r = story_request();
    r.prefix = "Lily liked the park. Lily liked the park. Lily liked the park. Lily liked the";
    r.n_predict = 32;
    auto service = [](const std::string & mode) {
        engine_options o;
        o.model_path = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf";
        o.cache_type = "f32";
        o.n_threads = 1;
        o.n_ctx = 512;
        o.speculate = mode;
        // stories260K-Q4_0 has the F32 model's vocabulary: a draft that often disagrees.
        if (mode == "draft" || mode == "both") o.draft_model = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-Q4_0.gguf";
        auto s = make_engine_model_service(o);
        REQUIRE(s.has_value());
        return std::move(*s);
    };
    auto plain = service("off")->complete(r, {}, {});
    REQUIRE(plain.has_value());
    REQUIRE_FALSE(plain->candidates.empty());
    for (const char * mode : {"lookup", "draft", "both"}) {
        INFO(mode);
        auto svc = service(mode);
        for (int round = 0; round < 2; ++round) {   // the second reuses the slot and the draft's sequence
            auto got = svc->complete(r, {}, {});
            REQUIRE(got.has_value());
            REQUIRE(got->candidates.size() == plain->candidates.size());
            CHECK(got->candidates[0].text == plain->candidates[0].text);
            // Speculation ran and some guesses held: the prompt repeats a sentence that the story
            // continues, and the draft is the same model in 4 bits (measured per round: lookup
            // keeps 2 of 7 guesses, the draft 22 of 39, both 22 of 40). With speculation switched
            // off, silently or not, nothing is drafted.
            INFO("round " << round << ": " << got->timings.n_draft_accepted << " of " << got->timings.n_drafted << " guesses kept");
            CHECK(got->timings.n_draft_accepted > 0);
        }
    }
    CHECK(plain->timings.n_drafted == 0);
    engine_options bad;
    bad.model_path = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf";
    bad.speculate = "draft";
    CHECK(make_engine_model_service(bad).message() == "speculate = draft needs a draft model (draft-model, --draft)");
    bad.speculate = "sometimes";
    CHECK(make_engine_model_service(bad).message().rfind("speculate: ", 0) == 0);
}

TEST_CASE("engine service: a warm-up leaves the window in the slot, and the request there evaluates only its end",
          "[daemon][engine][warm-up]") {
    auto svc = tiny_service();
    const fim_request r = story_request();
    fim_request w = r;
    w.prefill_only = true;
    auto warm = svc->complete(w, {}, {});
    REQUIRE(warm.has_value());
    CHECK(warm->candidates.empty());
    CHECK(warm->timings.n_generated == 0);
    CHECK(warm->timings.n_evaluated == warm->timings.n_prompt_tokens);
    CHECK(svc->status().warm_ups == 1);
    CHECK(svc->status().warm_up_tokens == static_cast<uint64_t>(warm->timings.n_prompt_tokens));

    auto got = svc->complete(r, {}, {});
    REQUIRE(got.has_value());
    // The last two prompt tokens are always evaluated again (sequence.h), nothing else.
    CHECK(got->timings.n_cached_tokens == got->timings.n_prompt_tokens - 2);
    CHECK(got->timings.n_burst_evaluated == 2);
    // ... and the answer is the one a cold slot gives.
    auto cold = tiny_service()->complete(r, {}, {});
    REQUIRE(cold.has_value());
    REQUIRE(got->candidates.size() == 1);
    REQUIRE(cold->candidates.size() == 1);
    CHECK(got->candidates[0].text == cold->candidates[0].text);
    CHECK(svc->status().answers == 1);
    CHECK(svc->status().answer_tokens_evaluated == 2);   // the warm-up's positions are not the answer's
}

TEST_CASE("engine service: a cancelled request's rows are reused by the next, and the burst's cost is counted once",
          "[daemon][engine][warm-up]") {
    auto svc = tiny_service();
    fim_request r = story_request();
    // The user types on: the first request is cancelled as its first piece arrives (its
    // prompt was evaluated whole), and the next keystroke's request follows.
    std::stop_source typed;
    auto first = svc->complete(r, typed.get_token(), [&](std::string_view) { typed.request_stop(); });
    REQUIRE(first.has_value());
    const int32_t first_evaluated = first->timings.n_evaluated;
    CHECK(first_evaluated > 10);
    CHECK(svc->status().answers == 0);
    r.prefix += " was";
    auto next = svc->complete(r, {}, {});
    REQUIRE(next.has_value());
    // Only the typed text and the prompt's end after it are evaluated again.
    CHECK(next->timings.n_cached_tokens >= first->timings.n_prompt_tokens - 3);
    CHECK(next->timings.n_evaluated < 10);
    CHECK(next->timings.n_burst_evaluated == first_evaluated + next->timings.n_evaluated);
    CHECK(svc->status().answers == 1);
    CHECK(svc->status().answer_tokens_evaluated == static_cast<uint64_t>(next->timings.n_burst_evaluated));
}

TEST_CASE("engine service: a warm-up never evicts the slot of a file being edited", "[daemon][engine][warm-up]") {
    fim_request edited = story_request();
    uint64_t one_slot = 0;
    {
        auto probe = tiny_service();
        REQUIRE(probe->complete(edited, {}, {}).has_value());
        one_slot = probe->status().kv_used_bytes;
    }
    engine_options o;
    o.model_path = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf";
    o.cache_type = "f32";
    o.n_threads = 1;
    o.n_ctx = 512;
    o.kv_budget_bytes = one_slot * 3 / 2;   // room for one such slot, not two
    auto made = make_engine_model_service(o);
    REQUIRE(made.has_value());
    auto & svc = **made;
    REQUIRE(svc.complete(edited, {}, {}).has_value());
    fim_request other = story_request();
    other.uri = "file:///other.txt";
    other.prefill_only = true;
    auto warm = svc.complete(other, {}, {});
    REQUIRE(warm.has_value());
    CHECK(warm->timings.n_evaluated == 0);
    CHECK(svc.status().warm_ups_skipped == 1);
    CHECK(svc.status().evictions == 0);
    CHECK(svc.status().n_slots == 1);
    // A request still gets its slot, evicting the least recently used as before.
    other.prefill_only = false;
    REQUIRE(svc.complete(other, {}, {}).has_value());
    CHECK(svc.status().evictions == 1);
}
