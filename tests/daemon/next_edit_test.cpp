// hearth/nextEdit: the pipeline's text decisions alone, then the request through the daemon's
// real transport on the scripted model (tests/daemon/scripted_model.h renames as the latest
// edit did).
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "daemon/pipeline/next_edit_pipeline.h"
#include "tests/daemon/running_daemon.h"

using namespace hearth::daemon;
using namespace hearth::daemon::testing;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

const std::string k_text = "def total_price(items):\n    total = 0\n    for item in items:\n        count += item.price\n    return count\n";

// "count" renamed to "total" at its first use, typed over the selection: one edit.
next_edit_ask renamed_ask() {
    next_edit_ask ask;
    ask.uri = "file:///w/prices.py";
    ask.language_id = "python";
    ask.text = k_text;
    ask.cursor = k_text.find("count");
    ask.edits = {{k_text.find("total = 0"), "count", "total"}};
    return ask;
}

void open_doc(test_client & c, const std::string & uri, const std::string & text, int version = 1) {
    const bool sent = static_cast<bool>(c.notify("textDocument/didOpen",
        {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", version}, {"text", text}}}}));
    REQUIRE(sent);
}

void change(test_client & c, const std::string & uri, int version, int line, int from, int to, const std::string & text) {
    const bool sent = static_cast<bool>(c.notify("textDocument/didChange",
        {{"textDocument", {{"uri", uri}, {"version", version}}},
         {"contentChanges", json::array{{{"range", {{"start", {{"line", line}, {"character", from}}}, {"end", {{"line", line}, {"character", to}}}}},
                                         {"text", text}}}}}));
    REQUIRE(sent);
}

std::string k_uri_of(const json::object & edit) { return std::string(edit.at("textDocument").at("uri").as_string()); }

json::object next_edit_params(const std::string & uri, int line, int ch) {
    return {{"textDocument", {{"uri", uri}, {"version", 2}}}, {"position", {{"line", line}, {"character", ch}}}};
}

}  // namespace

TEST_CASE("next edit: the window is the lines around the cursor, stretched to a near latest edit", "[daemon][next_edit]") {
    auto ask = renamed_ask();
    ask.edits.clear();
    auto w = next_edit_window(ask, 1);
    CHECK(ask.text.substr(w.begin, w.end - w.begin) == "    for item in items:\n        count += item.price\n    return count\n");
    ask = renamed_ask();
    ask.cursor = ask.text.find("return");
    w = next_edit_window(ask, 2);   // the edit on line 1 is a line above the window: taken in
    CHECK(w.begin == ask.text.find("    total = 0"));
    w = next_edit_window(ask, 1);   // two lines above: too far
    CHECK(w.begin == ask.text.find("        count"));
}

TEST_CASE("next edit: the request shows the edit as whole lines and the window before it", "[daemon][next_edit]") {
    next_edit_settings s;
    s.window_lines = 10;
    const next_edit_pipeline p(nullptr, s);
    const auto [req, w] = p.request_for(renamed_ask());
    REQUIRE(req.edits.size() == 1);
    CHECK(req.edits[0].line == 1);
    CHECK(req.edits[0].original == "    count = 0\n");
    CHECK(req.edits[0].updated == "    total = 0\n");
    CHECK(req.window == k_text);
    CHECK(req.window_before.find("    count = 0\n") != std::string::npos);
    CHECK(req.path == "w/prices.py");
    CHECK(req.window.substr(req.cursor, 5) == "count");
}

TEST_CASE("next edit: the confidence rules", "[daemon][next_edit]") {
    const auto ask = renamed_ask();
    const window_span whole{0, ask.text.size()};
    SECTION("the rename of the other uses is predicted, each use its own edit") {
        std::string renamed = k_text;
        for (size_t at; (at = renamed.find("count")) != std::string::npos;) renamed.replace(at, 5, "total");
        const auto edits = confident_edits(ask, whole, renamed);
        REQUIRE(edits.size() == 2);
        CHECK(edits[0] == predicted_edit{k_text.find("count"), k_text.find("count") + 5, "total"});
    }
    SECTION("no change, whitespace only, or a rewrite of most lines: no edit") {
        CHECK(confident_edits(ask, whole, k_text).empty());
        CHECK(confident_edits(ask, whole, std::string(k_text).insert(k_text.find("\n    return"), "   ")).empty());
        CHECK(confident_edits(ask, whole, "x = 1\ny = 2\nz = 3\nw = 4\nv = 5\n").empty());
    }
    SECTION("a rename through a short function touches most of its lines and is still an edit") {
        const std::string text = "def step(pos, v):\n    x = x + v\n    if x > 10:\n        x = 10\n    return x\n";
        next_edit_ask small;
        small.text = text;
        small.edits = {{9, "x", "pos"}};
        std::string renamed = text;
        for (size_t at = 18; (at = renamed.find('x', at)) != std::string::npos;) renamed.replace(at, 1, "pos");
        CHECK(confident_edits(small, {0, text.size()}, renamed).size() == 4);   // one per line
    }
    SECTION("the latest edit undone: no edit") {
        std::string undone = k_text;
        undone.replace(undone.find("total = 0"), 5, "count");
        CHECK(confident_edits(ask, whole, undone).empty());
    }
    SECTION("an edit that does not continue the rename (a line no edit touched rewritten): no edit") {
        std::string other = k_text;
        other.replace(other.find("return"), 6, "yield");
        CHECK(confident_edits(ask, whole, other).empty());
    }
}

TEST_CASE("next edit: an edit continues the recent ones when its words are theirs", "[daemon][next_edit]") {
    // Seen on `hearth bench next-edit`: the instruct models' false edits wrapped a call or
    // deleted code no edit had touched; the right ones repeated a recent edit's words.
    const std::vector<recent_edit> rename{{0, "count", "total"}};
    CHECK(continues_recent_edits("count", "total", rename));
    CHECK(continues_recent_edits("count", "total", {{0, "total", "count"}}));   // its words, either way
    CHECK_FALSE(continues_recent_edits("count", "amount", rename));
    CHECK_FALSE(continues_recent_edits("", "):\n", rename));                    // punctuation no edit typed
    CHECK_FALSE(continues_recent_edits("    del items[0]\n", "", rename));      // code no edit touched
    CHECK_FALSE(continues_recent_edits("x", "y", {}));                            // no recent edit: nothing continues
    // The same kind of change again: only its new words must be the recent edits'.
    const std::vector<recent_edit> isinstance{{0, "type(a) == E", "isinstance(a, E)"}};
    CHECK(continues_recent_edits("type(b.c) == F", "isinstance(b.c, F)", isinstance));
    const std::vector<recent_edit> ignore{{0, "  # type: ignore", ""}};
    CHECK(continues_recent_edits("  # type: ignore", "", ignore));
    CHECK_FALSE(continues_recent_edits("  # noqa", "", ignore));
    // Numbers are free (a version bumped); punctuation alone must repeat a recent edit's.
    CHECK(continues_recent_edits("7", "8", rename));
    CHECK(continues_recent_edits("", ", ", {{0, "", ", b"}}));
    CHECK_FALSE(continues_recent_edits("", ";", {{0, "", ", b"}}));
    // Words of non-ASCII letters count as words.
    CHECK(continues_recent_edits("größe", "länge", {{0, "größe", "länge"}}));
    CHECK_FALSE(continues_recent_edits("größe", "weite", {{0, "größe", "länge"}}));
}

TEST_CASE("daemon: hearth/nextEdit predicts the rename's next use", "[daemon][next_edit]") {
    running_daemon d;
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/prices.py";
    const std::string before = "def total_price(items):\n    count = 0\n    for item in items:\n        count += item.price\n    return count\n";
    open_doc(c, uri, before);
    change(c, uri, 2, 1, 4, 9, "total");
    REQUIRE(c.request(2, "hearth/nextEdit", next_edit_params(uri, 3, 8)));
    const auto r = ok_result(c, 2);
    const auto & edits = r.at("edits").as_array();
    REQUIRE(edits.size() == 2);
    const auto & e = edits[0].as_object();
    CHECK(e.at("newText").as_string() == "total");
    CHECK(json::serialize(e.at("range")) == R"({"start":{"line":3,"character":8},"end":{"line":3,"character":13}})");
    CHECK(json::serialize(e.at("showAt")) == R"({"start":{"line":3,"character":0},"end":{"line":3,"character":0}})");
    CHECK(json::serialize(e.at("textDocument")) == R"({"uri":"file:///w/prices.py","version":2})");
    CHECK(e.at("id").as_string().starts_with("ne"));
    // Its feedback is counted apart from completions'.
    REQUIRE(c.notify("hearth/didAccept", {{"uri", k_uri_of(e)}, {"id", e.at("id")}, {"insertText", "total"}}));
    REQUIRE(c.request(4, "hearth/status"));
    const auto st = ok_result(c, 4);
    CHECK(st.at("nextEditsAccepted").as_int64() == 1);
    CHECK(st.at("completionsAccepted").as_int64() == 0);
    CHECK(st.at("nextEditsPredicted").as_int64() == 1);
    // The model saw the edit as the history coalesced it.
    REQUIRE(d.model->last_next_edit().edits.size() == 1);
    CHECK(d.model->last_next_edit().edits[0].original == "    count = 0\n");
    // A document not open is refused as completions are.
    REQUIRE(c.request(3, "hearth/nextEdit", next_edit_params("file:///w/closed.py", 0, 0)));
    CHECK(error_code(c, 3) == -32602);
}

TEST_CASE("daemon: hearth/nextEdit with [next_edit] enabled = false answers no edit", "[daemon][next_edit]") {
    daemon_config cfg;
    cfg.next_edit.enabled = false;
    running_daemon d(cfg);
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/off.py";
    open_doc(c, uri, "count = 0\nprint(count)\n");
    change(c, uri, 2, 0, 0, 5, "total");
    REQUIRE(c.request(2, "hearth/nextEdit", next_edit_params(uri, 1, 6)));
    CHECK(ok_result(c, 2).at("edits").as_array().empty());
    CHECK(d.model->n_next_edit() == 0);
}

TEST_CASE("daemon: a newer hearth/nextEdit supersedes an older one, an edit cancels it", "[daemon][next_edit]") {
    running_daemon d({}, 200ms);   // 200 ms a line: the first is still running when the second comes
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/slow.py";
    open_doc(c, uri, "count = 0\nprint(count)\nprint(count)\n");
    change(c, uri, 2, 0, 0, 5, "total");
    REQUIRE(c.request(2, "hearth/nextEdit", next_edit_params(uri, 1, 6)));
    std::this_thread::sleep_for(100ms);
    REQUIRE(c.request(3, "hearth/nextEdit", next_edit_params(uri, 1, 6)));
    CHECK(error_code(c, 2) == -32800);
    CHECK(ok_result(c, 3).at("edits").as_array().size() == 2);
    // $/cancelRequest, and an edit to the document, cancel one too.
    REQUIRE(c.request(4, "hearth/nextEdit", next_edit_params(uri, 1, 6)));
    REQUIRE(c.notify("$/cancelRequest", {{"id", 4}}));
    CHECK(error_code(c, 4) == -32800);
    REQUIRE(c.request(5, "hearth/nextEdit", next_edit_params(uri, 1, 6)));
    std::this_thread::sleep_for(100ms);
    change(c, uri, 3, 2, 0, 0, "#");
    CHECK(error_code(c, 5) == -32800);
}

TEST_CASE("daemon: where the cursor rests, the next-edit prompt is prefilled in the background", "[daemon][next_edit][warm-up]") {
    running_daemon d({}, 1ms, /*prefetch=*/false, /*warm_up=*/true);
    auto c = d.unix_client();
    initialize(c);
    const std::string uri = "file:///w/rest.py";
    open_doc(c, uri, "count = 0\nprint(count)\n");
    change(c, uri, 2, 0, 0, 5, "total");
    REQUIRE(c.notify("hearth/cursorRest", {{"textDocument", {{"uri", uri}}}, {"position", {{"line", 1}, {"character", 6}}}}));
    for (int i = 0; i < 200 && d.model->n_next_edit_warm_ups() == 0; ++i) std::this_thread::sleep_for(10ms);
    REQUIRE(d.model->n_next_edit_warm_ups() == 1);
    const auto warm = d.model->last_next_edit();
    CHECK(warm.prefill_only);
    CHECK(warm.window == "total = 0\nprint(count)\n");
    REQUIRE(warm.edits.size() == 1);
    CHECK(d.model->n_next_edit() == 0);
}
