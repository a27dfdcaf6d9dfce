#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "lsp/document_store.h"
#include "lsp/edit_history.h"

using namespace hearth::lsp;
using namespace std::chrono_literals;

namespace {

// Applies a change to `text` and records it, as document::apply does.
struct typist {
    explicit typist(std::string t) : text(std::move(t)) {}
    std::string text;
    edit_history history;
    edit_history::clock::time_point now{};

    void change(size_t offset, size_t removed, std::string_view inserted, std::chrono::milliseconds after = 100ms) {
        now += after;
        history.record(offset, std::string_view(text).substr(offset, removed), inserted, now);
        text.replace(offset, removed, inserted);
    }
    void type(size_t offset, std::string_view s) {
        for (size_t k = 0; k < s.size(); ++k) change(offset + k, 0, s.substr(k, 1));
    }
};

// The edit rebuilt against the current text: the text with `inserted` put back to `removed`.
std::string before_edit(const std::string & text, const edit_history::edit & e) {
    std::string t = text;
    t.replace(e.offset, e.inserted.size(), e.removed);
    return t;
}

}  // namespace

TEST_CASE("edit history: typing at adjacent positions is one edit", "[lsp][edit_history]") {
    typist t("x = 1\n");
    t.type(4, "42");
    REQUIRE(t.history.edits().size() == 1);
    const auto & e = t.history.edits().back();
    CHECK(e.offset == 4);
    CHECK(e.removed.empty());
    CHECK(e.inserted == "42");
    CHECK(t.text == "x = 421\n");
}

TEST_CASE("edit history: a rename typed over a selection is one replacement", "[lsp][edit_history]") {
    typist t("count = 0\nprint(count)\n");
    t.change(0, 5, "t");     // the selection "count" replaced by the first key
    t.type(1, "otal");
    REQUIRE(t.history.edits().size() == 1);
    const auto & e = t.history.edits().back();
    CHECK(e.offset == 0);
    CHECK(e.removed == "count");
    CHECK(e.inserted == "total");
}

TEST_CASE("edit history: backspacing over typed text shrinks the edit, then over older text grows what it removed",
          "[lsp][edit_history]") {
    typist t("abc\n");
    t.type(3, "xy");                 // abcxy
    t.change(4, 1, "");              // abcx
    t.change(3, 1, "");              // abc
    CHECK(t.history.edits().empty());   // typed and deleted again: nothing happened
    t.type(3, "d");                  // abcd
    t.change(3, 1, "");              // abc
    t.change(2, 1, "");              // ab: older text now
    REQUIRE(t.history.edits().size() == 1);
    CHECK(t.history.edits().back().removed == "c");
    CHECK(t.history.edits().back().inserted.empty());
    CHECK(t.history.edits().back().offset == 2);
}

TEST_CASE("edit history: a change far away or after a pause starts a new edit", "[lsp][edit_history]") {
    typist t("first line\nsecond line\n");
    t.type(5, "!");
    t.type(18, "?");                          // elsewhere
    CHECK(t.history.edits().size() == 2);
    t.change(19, 0, "?", 2000ms);             // where the last ended, but after a pause
    CHECK(t.history.edits().size() == 3);
    for (const auto & e : t.history.edits()) CHECK(t.text.substr(e.offset, e.inserted.size()) == e.inserted);
}

TEST_CASE("edit history: an edit before older ones shifts them onto the current text", "[lsp][edit_history]") {
    typist t("aaa\nbbb\nccc\n");
    t.change(8, 3, "CCC");
    t.change(4, 3, "BBBBB");       // before it, longer
    t.change(0, 3, "");            // before both, shorter
    REQUIRE(t.history.edits().size() == 3);
    for (const auto & e : t.history.edits()) CHECK(t.text.substr(e.offset, e.inserted.size()) == e.inserted);
    CHECK(before_edit(t.text, t.history.edits()[0]) == "\nBBBBB\nccc\n");
}

TEST_CASE("edit history: bounded by a count and by bytes, the oldest going first", "[lsp][edit_history]") {
    SECTION("count") {
        edit_history h(edit_history_limits{3, 1 << 20, 1500ms});
        auto now = edit_history::clock::time_point{};
        for (int k = 0; k < 10; ++k) h.record(static_cast<size_t>(k) * 10, "", std::to_string(k), now += 10s);
        REQUIRE(h.edits().size() == 3);
        CHECK(h.edits().front().inserted == "7");
        CHECK(h.edits().back().inserted == "9");
    }
    SECTION("bytes") {
        edit_history h(edit_history_limits{100, 10, 1500ms});
        auto now = edit_history::clock::time_point{};
        h.record(0, "", "abcd", now += 10s);
        h.record(100, "", "efgh", now += 10s);
        h.record(200, "", "ijkl", now += 10s);
        CHECK(h.edits().size() == 2);
        CHECK(h.bytes() <= 10);
        h.record(300, "", std::string(11, 'x'), now += 10s);   // larger than the bound alone
        CHECK(h.edits().empty());
        CHECK(h.bytes() == 0);
    }
}

TEST_CASE("edit history: a whole-text change is the edit between common head and tail", "[lsp][edit_history]") {
    edit_history h;
    h.record_full("let α = 1;\n", "let β = 1;\n", edit_history::clock::now());
    REQUIRE(h.edits().size() == 1);
    CHECK(h.edits()[0].removed == "α");   // whole characters, though α and β share a lead byte
    CHECK(h.edits()[0].inserted == "β");
    CHECK(h.edits()[0].offset == 4);
}

TEST_CASE("edit history: the document store records didChange and forgets on close", "[lsp][edit_history]") {
    document_store store;
    REQUIRE(store.open(did_open_params{{"file:///a.py", "python", 1, "count = 0\nprint(count)\n"}}));
    did_change_params ch;
    ch.textDocument = {"file:///a.py", 2};
    ch.contentChanges = {{range{{0, 0}, {0, 5}}, "total"}};
    REQUIRE(store.change(ch));
    ch.textDocument.version = 3;
    ch.contentChanges = {{std::nullopt, "total = 0\nprint(total)\n"}};
    REQUIRE(store.change(ch));
    const auto & edits = store.find("file:///a.py")->history().edits();
    REQUIRE(edits.size() == 2);
    CHECK(edits[0].removed == "count");
    CHECK(edits[1].inserted == "total");
    REQUIRE(store.close(did_close_params{{"file:///a.py"}}));
    REQUIRE(store.open(did_open_params{{"file:///a.py", "python", 4, "total = 0\nprint(total)\n"}}));
    CHECK(store.find("file:///a.py")->history().edits().empty());
}
