#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include "lsp/types.h"

using namespace hearth::lsp;
namespace json = boost::json;

namespace {

template <class T>
std::string error_of(std::string_view params_json, std::string_view method = "m") {
    auto r = parse_params<T>(json::parse(params_json), method);
    REQUIRE(!r);
    return r.message();
}

}  // namespace

TEST_CASE("types: didOpen / didChange round-trip", "[lsp][types]") {
    const auto v = json::parse(R"({"textDocument":{"uri":"file:///a.py","languageId":"python","version":3,"text":"x = 1\n"}})");
    auto p = parse_params<did_open_params>(v, "textDocument/didOpen");
    REQUIRE(p);
    CHECK(p->textDocument.languageId == "python");
    CHECK(p->textDocument.version == 3);
    CHECK(json::value_from(*p) == v);

    const auto c = json::parse(R"({"textDocument":{"uri":"u","version":4},"contentChanges":[
        {"range":{"start":{"line":0,"character":1},"end":{"line":0,"character":2}},"rangeLength":1,"text":"é"},
        {"text":"whole"}]})");
    auto ch = parse_params<did_change_params>(c, "textDocument/didChange");
    REQUIRE(ch);
    REQUIRE(ch->contentChanges.size() == 2);
    CHECK(ch->contentChanges[0].range == range{{0, 1}, {0, 2}});
    CHECK(!ch->contentChanges[1].range);
    CHECK(ch->contentChanges[1].text == "whole");
}

TEST_CASE("types: wrong-typed and missing fields name the field", "[lsp][types]") {
    CHECK(error_of<did_open_params>(R"({"textDocument":{"uri":"u","languageId":"c","version":"3","text":""}})",
                                    "textDocument/didOpen") ==
          "textDocument/didOpen: invalid params: params.textDocument.version: expected integer, got string");
    CHECK(error_of<did_open_params>(R"({"textDocument":{"uri":"u","version":1,"text":""}})") ==
          "m: invalid params: params.textDocument.languageId: missing required field");
    CHECK(error_of<did_change_params>(R"({"textDocument":{"uri":"u","version":1},"contentChanges":[{"text":"a"},
        {"range":{"start":{"line":0,"character":-1},"end":{"line":0,"character":0}},"text":""}]})") ==
          "m: invalid params: params.contentChanges[1].range.start.character: expected unsigned integer, got -1");
    CHECK(error_of<did_change_params>(R"({"textDocument":{"uri":"u","version":1},"contentChanges":{}})") ==
          "m: invalid params: params.contentChanges: expected array, got object");
    CHECK(error_of<inline_completion_params>(
              R"({"textDocument":{"uri":"u"},"position":{"line":1.5,"character":0},"context":{"triggerKind":1}})") ==
          "m: invalid params: params.position.line: expected unsigned integer, got number");
    CHECK(error_of<inline_completion_params>(
              R"({"textDocument":{"uri":"u"},"position":{"line":1,"character":0},"context":{"triggerKind":3}})") ==
          "m: invalid params: params.context.triggerKind: expected 1 (Invoked) or 2 (Automatic), got 3");
    CHECK(error_of<chat_params>(R"({"textDocument":{"uri":"u"},"range":{"start":{"line":0,"character":0},
        "end":{"line":0,"character":0}},"prompt":"p","partialResultToken":{}})") ==
          "m: invalid params: params.partialResultToken: expected integer or string, got object");
    CHECK(error_of<did_open_params>("null") == "m: invalid params: params: expected object, got null");
    CHECK(error_of<position>(R"({"line":4294967296,"character":0})") ==
          "m: invalid params: params.line: expected unsigned integer, got 4294967296");
    CHECK(error_of<initialize_params>(R"({"capabilities":{"general":{"positionEncodings":["utf-8",16]}}})") ==
          "m: invalid params: params.capabilities.general.positionEncodings[1]: expected string, got integer");
    CHECK(error_of<initialize_params>(R"({"processId":null})") ==
          "m: invalid params: params.capabilities: missing required field");
}

TEST_CASE("types: inline completion trigger kinds of LSP 3.18 and of the 3.17 proposal", "[lsp][types]") {
    auto kind_of = [](int k) {
        const auto s = R"({"textDocument":{"uri":"u"},"position":{"line":0,"character":0},"context":{"triggerKind":)" +
                       std::to_string(k) + "}}";
        return parse_params<inline_completion_params>(json::parse(s), "m")->context.triggerKind;
    };
    CHECK(kind_of(1) == inline_completion_trigger_kind::invoked);     // 3.18 Invoked
    CHECK(kind_of(2) == inline_completion_trigger_kind::automatic);   // 3.18 Automatic
    CHECK(kind_of(0) == inline_completion_trigger_kind::invoked);     // 3.17 proposal's Invoked
    CHECK(error_of<inline_completion_params>(
              R"({"textDocument":{"uri":"u"},"position":{"line":0,"character":0},"context":{"triggerKind":-1}})") ==
          "m: invalid params: params.context.triggerKind: expected 1 (Invoked) or 2 (Automatic), got -1");
}

TEST_CASE("types: initialize params and result", "[lsp][types]") {
    auto p = parse_params<initialize_params>(json::parse(R"({"processId":null,"clientInfo":{"name":"Neovim","version":"0.9"},
        "capabilities":{"general":{"positionEncodings":["utf-32","utf-16"]},"window":{"workDoneProgress":true},
        "textDocument":{"inlineCompletion":{}}},"initializationOptions":{"model":"x"}})"), "initialize");
    REQUIRE(p);
    CHECK(!p->processId);
    CHECK(p->clientInfo->name == "Neovim");
    CHECK(p->capabilities.general.positionEncodings == std::vector<std::string>{"utf-32", "utf-16"});
    CHECK(p->capabilities.window.workDoneProgress);
    CHECK(p->initializationOptions == json::parse(R"({"model":"x"})"));

    initialize_result r;
    r.positionEncoding = position_encoding::utf32;
    r.serverInfo.version = "0.1.0";
    CHECK(json::value_from(r) == json::parse(R"({"capabilities":{
        "positionEncoding":"utf-32",
        "textDocumentSync":{"openClose":true,"change":2,"save":{"includeText":false}},
        "inlineCompletionProvider":true,
        "executeCommandProvider":{"commands":["hearth.explain","hearth.fix","hearth.ask","hearth.acceptCompletion"]},
        "experimental":{"hearth":{"methods":["hearth/chat","hearth/status","hearth/didAccept","hearth/didReject","hearth/cursorRest","hearth/nextEdit"]}}},
        "serverInfo":{"name":"hearth","version":"0.1.0"}})"));
}

TEST_CASE("types: inline completion items and feedback", "[lsp][types]") {
    inline_completion_list list{{inline_completion_item{"return x;", std::nullopt, range{{2, 4}, {2, 4}},
                                                        command{"accepted", "hearth.acceptCompletion",
                                                                json::array{json::object{{"uri", "u"}, {"id", "c1"}}}}},
                                 inline_completion_item{"pass", std::nullopt, std::nullopt, std::nullopt}}};
    const auto v = json::value_from(list);
    CHECK(v == json::parse(R"({"items":[
        {"insertText":"return x;","range":{"start":{"line":2,"character":4},"end":{"line":2,"character":4}},
         "command":{"title":"accepted","command":"hearth.acceptCompletion","arguments":[{"uri":"u","id":"c1"}]}},
        {"insertText":"pass"}]})"));
    auto back = parse_params<inline_completion_list>(v, "x");
    REQUIRE(back);
    CHECK(back->items[0].command->arguments.size() == 1);

    auto show = parse_params<did_show_completion_params>(json::parse(R"({"item":{"insertText":{"kind":"snippet","value":"a$0"}}})"), "x");
    REQUIRE(show);
    CHECK(show->item.insertText == "a$0");
    auto part = parse_params<did_partially_accept_completion_params>(json::parse(R"({"item":{"insertText":"abc"},"acceptedLength":2})"), "x");
    REQUIRE(part);
    CHECK(part->acceptedLength == 2);
    auto fb = parse_params<completion_feedback_params>(json::parse(R"({"uri":"file:///a","id":"c1","acceptedLength":3})"), "x");
    REQUIRE(fb);
    CHECK(fb->id == "c1");
    CHECK(!fb->insertText);
    CHECK(error_of<completion_feedback_params>(R"({"id":"c1"})") == "m: invalid params: params.uri: missing required field");
}

TEST_CASE("types: chat params from hearth/chat and from commands", "[lsp][types]") {
    auto c = parse_params<chat_params>(json::parse(R"({"textDocument":{"uri":"u"},
        "range":{"start":{"line":0,"character":0},"end":{"line":3,"character":0}},"prompt":"why?","partialResultToken":"t1"})"), "hearth/chat");
    REQUIRE(c);
    CHECK(c->intent == chat_intent::chat);
    CHECK(*c->partialResultToken == json::value("t1"));
    CHECK(!c->workDoneToken);

    auto cmd = parse_params<execute_command_params>(json::parse(R"({"command":"hearth.explain","workDoneToken":5,
        "arguments":[{"textDocument":{"uri":"u"},"range":{"start":{"line":1,"character":0},"end":{"line":2,"character":0}}}]})"), "x");
    REQUIRE(cmd);
    auto from = chat_params_from_command(*cmd);
    REQUIRE(from);
    CHECK(from->intent == chat_intent::explain);
    CHECK(from->prompt.empty());
    CHECK(from->range == range{{1, 0}, {2, 0}});
    CHECK(*from->workDoneToken == json::value(5));

    cmd->command = "hearth.ask";
    auto ask = chat_params_from_command(*cmd);
    REQUIRE(!ask);
    CHECK(ask.message() == "hearth.ask: invalid params: params.arguments[0].prompt: hearth.ask needs a non-empty prompt");
    cmd->arguments.clear();
    CHECK(chat_params_from_command(*cmd).message() ==
          "hearth.ask: invalid params: params.arguments: expected one argument {textDocument, range, prompt?}");
    cmd->arguments.push_back(json::object{{"textDocument", json::object{{"uri", 1}}}});
    CHECK(chat_params_from_command(*cmd).message() ==
          "hearth.ask: invalid params: params.arguments[0].textDocument.uri: expected string, got integer");
}

TEST_CASE("types: status result merges extra fields", "[lsp][types]") {
    status_result s;
    s.model = "stories260K";
    s.cacheSlots = 4;
    s.extra["scheduler"] = json::object{{"debounceMs", 50}};
    const auto v = json::value_from(s);
    CHECK(v.at("model") == "stories260K");
    CHECK(v.at("cacheSlots") == 4);
    CHECK(v.at("scheduler").at("debounceMs") == 50);
    CHECK(v.at("decodeTokensPerSecond").is_double());
}

TEST_CASE("types: position encoding names", "[lsp][types]") {
    CHECK(position_encoding_name(position_encoding::utf8) == "utf-8");
    CHECK(position_encoding_name(position_encoding::utf16) == "utf-16");
    CHECK(position_encoding_name(position_encoding::utf32) == "utf-32");
}
