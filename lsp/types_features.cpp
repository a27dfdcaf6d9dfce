// Conversions of the feature structs: inline completion and its feedback, hearth/chat,
// executeCommand, hearth/status, $/progress, window/logMessage, $/cancelRequest.
#include "lsp/json_read.h"
#include "lsp/types.h"

namespace hearth::lsp {

using namespace detail;

// ---- inline completion

selected_completion_info tag_invoke(const json::value_to_tag<selected_completion_info> &, const json::value & v) {
    const auto & o = object_of(v);
    return selected_completion_info{field<range>(o, "range"), field<std::string>(o, "text")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const selected_completion_info & x) {
    v = json::object{{"range", json::value_from(x.range)}, {"text", x.text}};
}

inline_completion_context tag_invoke(const json::value_to_tag<inline_completion_context> &, const json::value & v) {
    const auto & o = object_of(v);
    inline_completion_context c;
    const int32_t kind = field<int32_t>(o, "triggerKind");
    // LSP 3.18 numbers the kinds 1 (Invoked) and 2 (Automatic). Clients built on the 3.17
    // proposal's types (vscode-languageserver-types 3.17.x) send 0 for Invoked and 1 for
    // Automatic; 0 is read as Invoked, and their 1 as the 3.18 Invoked (more candidates,
    // never a wrong answer).
    if (kind < 0 || kind > 2) {
        throw field_error("triggerKind", "expected 1 (Invoked) or 2 (Automatic), got " + std::to_string(kind));
    }
    c.triggerKind = kind == 2 ? inline_completion_trigger_kind::automatic : inline_completion_trigger_kind::invoked;
    c.selectedCompletionInfo = optional_field<selected_completion_info>(o, "selectedCompletionInfo");
    return c;
}
void tag_invoke(const json::value_from_tag &, json::value & v, const inline_completion_context & x) {
    json::object o{{"triggerKind", static_cast<int>(x.triggerKind)}};
    if (x.selectedCompletionInfo) o["selectedCompletionInfo"] = json::value_from(*x.selectedCompletionInfo);
    v = std::move(o);
}

inline_completion_params tag_invoke(const json::value_to_tag<inline_completion_params> &, const json::value & v) {
    const auto & o = object_of(v);
    return inline_completion_params{field<text_document_identifier>(o, "textDocument"), field<position>(o, "position"),
                                    field<inline_completion_context>(o, "context"), optional_token(o, "workDoneToken")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const inline_completion_params & x) {
    json::object o{{"textDocument", json::value_from(x.textDocument)},
                   {"position", json::value_from(x.position)},
                   {"context", json::value_from(x.context)}};
    if (x.workDoneToken) o["workDoneToken"] = *x.workDoneToken;
    v = std::move(o);
}

command tag_invoke(const json::value_to_tag<command> &, const json::value & v) {
    const auto & o = object_of(v);
    return command{field<std::string>(o, "title"), field<std::string>(o, "command"),
                   optional_field<json::array>(o, "arguments").value_or(json::array{})};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const command & x) {
    json::object o{{"title", x.title}, {"command", x.command}};
    if (!x.arguments.empty()) o["arguments"] = x.arguments;
    v = std::move(o);
}

inline_completion_item tag_invoke(const json::value_to_tag<inline_completion_item> &, const json::value & v) {
    const auto & o = object_of(v);
    inline_completion_item item;
    // insertText may be a StringValue snippet {kind: "snippet", value}; we read its value.
    const json::value * t = o.if_contains("insertText");
    if (!t) throw field_error("insertText", "missing required field");
    if (t->is_object()) {
        item.insertText = field<std::string>(t->get_object(), "value");
    } else {
        item.insertText = field<std::string>(o, "insertText");
    }
    item.filterText = optional_field<std::string>(o, "filterText");
    item.range = optional_field<range>(o, "range");
    item.command = optional_field<command>(o, "command");
    return item;
}
void tag_invoke(const json::value_from_tag &, json::value & v, const inline_completion_item & x) {
    json::object o{{"insertText", x.insertText}};
    if (x.filterText) o["filterText"] = *x.filterText;
    put_optional_range(o, "range", x.range);
    if (x.command) o["command"] = json::value_from(*x.command);
    v = std::move(o);
}

inline_completion_list tag_invoke(const json::value_to_tag<inline_completion_list> &, const json::value & v) {
    return inline_completion_list{field<std::vector<inline_completion_item>>(object_of(v), "items")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const inline_completion_list & x) {
    json::array items;
    for (const auto & i : x.items) items.push_back(json::value_from(i));
    v = json::object{{"items", std::move(items)}};
}

did_show_completion_params tag_invoke(const json::value_to_tag<did_show_completion_params> &, const json::value & v) {
    return did_show_completion_params{field<inline_completion_item>(object_of(v), "item")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const did_show_completion_params & x) {
    v = json::object{{"item", json::value_from(x.item)}};
}

did_partially_accept_completion_params tag_invoke(const json::value_to_tag<did_partially_accept_completion_params> &,
                                                  const json::value & v) {
    const auto & o = object_of(v);
    return did_partially_accept_completion_params{field<inline_completion_item>(o, "item"),
                                                  field<uint32_t>(o, "acceptedLength")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const did_partially_accept_completion_params & x) {
    v = json::object{{"item", json::value_from(x.item)}, {"acceptedLength", x.acceptedLength}};
}

completion_feedback_params tag_invoke(const json::value_to_tag<completion_feedback_params> &, const json::value & v) {
    const auto & o = object_of(v);
    return completion_feedback_params{field<std::string>(o, "uri"), optional_field<std::string>(o, "id"),
                                      optional_field<std::string>(o, "insertText"), optional_field<range>(o, "range"),
                                      optional_field<uint32_t>(o, "acceptedLength")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const completion_feedback_params & x) {
    json::object o{{"uri", x.uri}};
    if (x.id) o["id"] = *x.id;
    if (x.insertText) o["insertText"] = *x.insertText;
    put_optional_range(o, "range", x.range);
    if (x.acceptedLength) o["acceptedLength"] = *x.acceptedLength;
    v = std::move(o);
}

// ---- chat and commands

chat_params tag_invoke(const json::value_to_tag<chat_params> &, const json::value & v) {
    const auto & o = object_of(v);
    chat_params p;
    p.textDocument = field<text_document_identifier>(o, "textDocument");
    p.range = field<range>(o, "range");
    p.prompt = field<std::string>(o, "prompt");
    p.partialResultToken = optional_token(o, "partialResultToken");
    p.workDoneToken = optional_token(o, "workDoneToken");
    return p;
}
void tag_invoke(const json::value_from_tag &, json::value & v, const chat_params & x) {
    json::object o{{"textDocument", json::value_from(x.textDocument)}, {"range", json::value_from(x.range)}, {"prompt", x.prompt}};
    if (x.partialResultToken) o["partialResultToken"] = *x.partialResultToken;
    if (x.workDoneToken) o["workDoneToken"] = *x.workDoneToken;
    v = std::move(o);
}

chat_result tag_invoke(const json::value_to_tag<chat_result> &, const json::value & v) {
    return chat_result{field<std::string>(object_of(v), "text")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const chat_result & x) {
    v = json::object{{"text", x.text}};
}

execute_command_params tag_invoke(const json::value_to_tag<execute_command_params> &, const json::value & v) {
    const auto & o = object_of(v);
    return execute_command_params{field<std::string>(o, "command"),
                                  optional_field<json::array>(o, "arguments").value_or(json::array{}),
                                  optional_token(o, "workDoneToken")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const execute_command_params & x) {
    json::object o{{"command", x.command}};
    if (!x.arguments.empty()) o["arguments"] = x.arguments;
    if (x.workDoneToken) o["workDoneToken"] = *x.workDoneToken;
    v = std::move(o);
}

result<chat_params> chat_params_from_command(const execute_command_params & p) {
    chat_params c;
    if (p.command == command_explain) {
        c.intent = chat_intent::explain;
    } else if (p.command == command_fix) {
        c.intent = chat_intent::fix;
    } else if (p.command == command_ask) {
        c.intent = chat_intent::ask;
    } else {
        return fail("command '", p.command, "' is not a chat command");
    }
    try {
        if (p.arguments.empty()) throw field_error("arguments", "expected one argument {textDocument, range, prompt?}");
        const json::value & arg = p.arguments[0];
        try {
            const auto & o = object_of(arg);
            c.textDocument = field<text_document_identifier>(o, "textDocument");
            c.range = field<range>(o, "range");
            c.prompt = optional_field<std::string>(o, "prompt").value_or("");
        } catch (const field_error & e) {
            throw field_error(join("arguments[0]", e.path), e.what());
        }
        if (c.intent == chat_intent::ask && c.prompt.empty()) {
            throw field_error("arguments[0].prompt", "hearth.ask needs a non-empty prompt");
        }
    } catch (const field_error & e) {
        return fail(p.command, ": invalid params: params.", e.path, ": ", e.what());
    }
    c.workDoneToken = p.workDoneToken;
    return c;
}

// ---- status, progress, logs, cancellation

status_result tag_invoke(const json::value_to_tag<status_result> &, const json::value & v) {
    const auto & o = object_of(v);
    status_result s;
    s.version = optional_field<std::string>(o, "version").value_or("");
    s.model = optional_field<std::string>(o, "model").value_or("");
    s.modelPath = optional_field<std::string>(o, "modelPath").value_or("");
    return s;   // read back only in tests and clients; the counters are write-only here
}
void tag_invoke(const json::value_from_tag &, json::value & v, const status_result & x) {
    json::object o = x.extra;
    o["version"] = x.version;
    o["model"] = x.model;
    o["modelPath"] = x.modelPath;
    o["mappedBytes"] = x.mappedBytes;
    o["kvBudgetBytes"] = x.kvBudgetBytes;
    o["kvUsedBytes"] = x.kvUsedBytes;
    o["cacheSlots"] = x.cacheSlots;
    o["cacheSlotsUsed"] = x.cacheSlotsUsed;
    o["queueDepth"] = x.queueDepth;
    o["requestsInFlight"] = x.requestsInFlight;
    o["lastCompletionMs"] = x.lastCompletionMs;
    o["promptTokensPerSecond"] = x.promptTokensPerSecond;
    o["decodeTokensPerSecond"] = x.decodeTokensPerSecond;
    o["completionsShown"] = x.completionsShown;
    o["completionsAccepted"] = x.completionsAccepted;
    o["completionsRejected"] = x.completionsRejected;
    v = std::move(o);
}

log_message_params tag_invoke(const json::value_to_tag<log_message_params> &, const json::value & v) {
    const auto & o = object_of(v);
    log_message_params p{field<int32_t>(o, "type"), field<std::string>(o, "message")};
    if (p.type < 1 || p.type > 5) throw field_error("type", "expected 1..5, got " + std::to_string(p.type));
    return p;
}
void tag_invoke(const json::value_from_tag &, json::value & v, const log_message_params & x) {
    v = json::object{{"type", x.type}, {"message", x.message}};
}

progress_params tag_invoke(const json::value_to_tag<progress_params> &, const json::value & v) {
    const auto & o = object_of(v);
    auto token = optional_token(o, "token");
    if (!token) throw field_error("token", "missing required field");
    const json::value * value = o.if_contains("value");
    if (!value) throw field_error("value", "missing required field");
    return progress_params{std::move(*token), *value};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const progress_params & x) {
    v = json::object{{"token", x.token}, {"value", x.value}};
}

cancel_params tag_invoke(const json::value_to_tag<cancel_params> &, const json::value & v) {
    auto id = optional_token(object_of(v), "id");
    if (!id) throw field_error("id", "missing required field");
    return cancel_params{std::move(*id)};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const cancel_params & x) {
    v = json::object{{"id", x.id}};
}

}  // namespace hearth::lsp
