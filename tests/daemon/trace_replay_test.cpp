// Editing traces: the format's parser, and the replayer's suggestion memory on the tiny model
// through the daemon's engine and completion pipeline (f32 cache, exact prefix reuse): a
// typed-ahead answer is the rest of the suggestion, and a prefetched answer after an accept
// is exactly what the model says there cold.
#include <catch2/catch.hpp>

#include "daemon/bench/edit_trace.h"
#include "daemon/bench/trace_replay.h"

using namespace hearth;
using namespace hearth::daemon;

namespace {

const std::string k_tiny = std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf";

// The daemon's own engine on the tiny model.
std::unique_ptr<model_service> tiny_model() {
    engine_options eo;
    eo.model_path = k_tiny;
    eo.cache_type = "f32";
    eo.n_threads = 2;
    eo.n_ctx = 512;
    auto m = make_engine_model_service(eo);
    REQUIRE(m.has_value());
    return std::move(*m);
}

replay_options options(bool memory, bool cold) {
    replay_options ro;
    ro.settings.max_tokens = 12;
    ro.settings.chunk_reuse_min = 0;
    ro.settings.typed_ahead = ro.settings.prefetch = memory;
    ro.cold = cold;
    return ro;
}

}  // namespace

TEST_CASE("edit trace: every op parses; bad lines are refused with their line number", "[daemon][trace]") {
    auto ev = parse_trace(R"({"op":"open","uri":"u","text":"a\nb"}
{"op":"edit","uri":"u","start":[1,0],"end":[1,1],"text":"xy"}
{"op":"complete","uri":"u","line":1,"col":2}

{"op":"complete","uri":"u"}
{"op":"type_suggestion","uri":"u","chars":3}
{"op":"accept","uri":"u"}
{"op":"type","uri":"u","text":"z"}
)");
    REQUIRE(ev.has_value());
    REQUIRE(ev->size() == 7);
    CHECK((*ev)[6].op == trace_event::kind::type);
    CHECK((*ev)[6].text == "z");
    CHECK((*ev)[1].op == trace_event::kind::edit);
    CHECK((*ev)[2].line == 1);
    CHECK((*ev)[3].line == -1);   // at the cursor
    CHECK((*ev)[4].chars == 3);
    CHECK((*ev)[5].op == trace_event::kind::accept);

    std::string text = "a\nb";
    auto end = apply_trace_edit(text, (*ev)[1]);
    REQUIRE(end.has_value());
    CHECK(text == "a\nxy");
    CHECK(*end == 4);

    CHECK(parse_trace("{\"op\":\"jump\",\"uri\":\"u\"}").message() ==
          "trace line 1: op 'jump' is not open, edit, complete, type, type_suggestion or accept");
    CHECK(parse_trace("\n{\"op\":\"type_suggestion\",\"uri\":\"u\",\"chars\":0}").message() ==
          "trace line 2: 'chars' must be at least 1");
    CHECK(parse_trace("{\"op\":\"complete\",\"uri\":\"u\",\"line\":1}").message() == "trace line 1: 'col' must be an integer");
    CHECK(parse_trace("[1]").message() == "trace line 1: not a JSON object");
}

TEST_CASE("trace replay: typed-ahead and prefetched answers without the model; prefetched = the model's", "[daemon][trace]") {
    auto lm = tiny_model();
    const std::string open = R"({"op":"open","uri":"s.txt","text":"Once upon a time, there was a little girl named Lily. She"}
{"op":"complete","uri":"s.txt","line":0,"col":57}
)";
    const replay_options with_memory = options(true, false);
    const replay_options cold = options(false, true);

    // Typing two bytes of the suggestion: its rest, from memory, nothing evaluated.
    auto typed = parse_trace(open + R"({"op":"type_suggestion","uri":"s.txt","chars":2}
{"op":"complete","uri":"s.txt"}
)");
    REQUIRE(typed.has_value());
    auto a = replay_trace(*lm, *typed, with_memory);
    INFO((a ? std::string() : a.message()));
    REQUIRE(a.has_value());
    REQUIRE(a->completions.size() == 2);
    const auto & first = a->completions[0];
    REQUIRE(first.text.size() > 2);
    CHECK_FALSE(first.from_memory);
    CHECK(a->completions[1].from_memory);
    CHECK(a->completions[1].text == first.text.substr(2));
    CHECK(a->completions[1].n_evaluated == 0);

    // Accepting it: the completion prefetched while it was shown, which is exactly what the
    // model says there when asked cold.
    auto accepted = parse_trace(open + R"({"op":"accept","uri":"s.txt"}
{"op":"complete","uri":"s.txt"}
)");
    REQUIRE(accepted.has_value());
    auto b = replay_trace(*lm, *accepted, with_memory);
    INFO((b ? std::string() : b.message()));
    REQUIRE(b.has_value());
    REQUIRE(b->completions.size() == 2);
    CHECK(b->completions[1].from_memory);
    CHECK(b->prefetch_ms.size() >= 1);
    auto c = replay_trace(*lm, *accepted, cold);
    INFO((c ? std::string() : c.message()));
    REQUIRE(c.has_value());
    REQUIRE(c->completions.size() == 2);
    CHECK(c->completions[0].text == first.text);
    CHECK(c->completions[1].doc_hash == b->completions[1].doc_hash);
    CHECK(c->completions[1].text == b->completions[1].text);
    CHECK_FALSE(c->completions[1].from_memory);

    // Nothing shown: accepting does nothing; an unknown document is an error.
    auto none = parse_trace("{\"op\":\"open\",\"uri\":\"u\",\"text\":\"x\"}\n{\"op\":\"accept\",\"uri\":\"u\"}");
    REQUIRE(none.has_value());
    CHECK(replay_trace(*lm, *none, cold).has_value());
    auto unknown = parse_trace("{\"op\":\"accept\",\"uri\":\"v\"}");
    REQUIRE(unknown.has_value());
    CHECK(replay_trace(*lm, *unknown, cold).message() == "trace event 1: document v is not open");
}
