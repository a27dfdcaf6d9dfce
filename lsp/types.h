// LSP protocol structs (3.17 + 3.18's inline completion) and hearth's own, with the spec's
// camelCase field names, converted with Boost.JSON's value_to / value_from (tag_invoke).
// Reading validates: a missing required field or a wrong-typed one throws field_error
// naming the path (`textDocument.version: expected integer, got string`); parse_params()
// turns that into an error the server answers with -32602. Unknown fields are ignored.
// Positions are in the connection's negotiated encoding (see document_store.h).
// Thread-safety: plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include "base/result.h"

namespace hearth::lsp {

namespace json = boost::json;

// Thrown by the readers below; `path` is relative to the value being read.
struct field_error : std::runtime_error {
    field_error(std::string path, std::string what) : std::runtime_error(std::move(what)), path(std::move(path)) {}
    std::string path;
};

enum class position_encoding { utf8, utf16, utf32 };
std::string_view position_encoding_name(position_encoding e);   // "utf-8", "utf-16", "utf-32"

struct position {
    uint32_t line = 0;
    uint32_t character = 0;   // code units of the negotiated encoding
    bool operator==(const position &) const = default;
};
struct range {
    position start;
    position end;
    bool operator==(const range &) const = default;
};
struct text_document_identifier { std::string uri; };
struct versioned_text_document_identifier { std::string uri; int32_t version = 0; };
struct text_document_item {
    std::string uri;
    std::string languageId;
    int32_t version = 0;
    std::string text;
};
// With a range: replace that range by text (incremental). Without: the whole new text.
struct text_document_content_change_event {
    std::optional<lsp::range> range;
    std::string text;
};

struct did_open_params { text_document_item textDocument; };
struct did_change_params {
    versioned_text_document_identifier textDocument;
    std::vector<text_document_content_change_event> contentChanges;
};
struct did_close_params { text_document_identifier textDocument; };
// hearth/cursorRest: the editor's cursor came to rest here (the plugins send it, debounced).
struct text_document_position_params { text_document_identifier textDocument; lsp::position position; };
struct did_save_params { text_document_identifier textDocument; std::optional<std::string> text; };

struct client_info { std::string name; std::optional<std::string> version; };
struct general_client_capabilities { std::vector<std::string> positionEncodings; };
struct window_client_capabilities { bool workDoneProgress = false; };
struct client_capabilities {
    general_client_capabilities general;
    window_client_capabilities window;
};
struct initialize_params {
    std::optional<int64_t> processId;
    std::optional<client_info> clientInfo;
    std::optional<std::string> rootUri;
    client_capabilities capabilities;
    json::value initializationOptions;   // passed through to the daemon as sent (null if absent)
};

// What the server answers; capabilities are fixed by the protocol layer (see to_json).
struct server_info { std::string name; std::string version; };
struct initialize_result {
    position_encoding positionEncoding = position_encoding::utf16;
    server_info serverInfo{"hearth", ""};
};
// Commands announced in executeCommandProvider, and hearth's own methods in experimental.
inline constexpr std::string_view command_explain = "hearth.explain";
inline constexpr std::string_view command_fix = "hearth.fix";
inline constexpr std::string_view command_ask = "hearth.ask";
inline constexpr std::string_view command_accept_completion = "hearth.acceptCompletion";

enum class inline_completion_trigger_kind { invoked = 1, automatic = 2 };
struct selected_completion_info { lsp::range range; std::string text; };
struct inline_completion_context {
    inline_completion_trigger_kind triggerKind = inline_completion_trigger_kind::invoked;
    std::optional<selected_completion_info> selectedCompletionInfo;
};
struct inline_completion_params {
    text_document_identifier textDocument;
    lsp::position position;
    inline_completion_context context;
    std::optional<json::value> workDoneToken;   // integer or string
};
struct command {
    std::string title;
    std::string command;
    json::array arguments;   // omitted on the wire when empty
};
struct inline_completion_item {
    std::string insertText;
    std::optional<std::string> filterText;
    std::optional<lsp::range> range;
    std::optional<lsp::command> command;
};
struct inline_completion_list { std::vector<inline_completion_item> items; };

// Copilot-style feedback notifications (textDocument/didShowCompletion, ...PartiallyAccept...).
struct did_show_completion_params { inline_completion_item item; };
struct did_partially_accept_completion_params {
    inline_completion_item item;
    uint32_t acceptedLength = 0;   // UTF-16 code units of insertText accepted
};

// hearth/didAccept, hearth/didReject, and the argument of hearth.acceptCompletion.
struct completion_feedback_params {
    std::string uri;
    std::optional<std::string> id;            // opaque id the server put in the item's command
    std::optional<std::string> insertText;
    std::optional<lsp::range> range;
    std::optional<uint32_t> acceptedLength;   // partial accept, in position-encoding units
};

// hearth/chat; also built from workspace/executeCommand hearth.explain / .fix / .ask.
enum class chat_intent { chat, explain, fix, ask };
struct chat_params {
    text_document_identifier textDocument;
    lsp::range range;
    std::string prompt;                            // may be empty for explain / fix
    std::optional<json::value> partialResultToken; // integer or string
    std::optional<json::value> workDoneToken;
    chat_intent intent = chat_intent::chat;        // not on the wire of hearth/chat
};
struct chat_result { std::string text; };

// hearth/nextEdit (docs/protocol.md), modelled on Copilot's textDocument/copilotInlineEdit:
// the edits predicted to follow the recent ones; none is a normal answer.
struct next_edit_params {
    text_document_identifier textDocument;
    std::optional<int32_t> version;   // textDocument.version, where the client sends it
    lsp::position position;
};
struct next_edit_item {
    std::string id;                                  // for hearth/didAccept, hearth/didReject
    versioned_text_document_identifier textDocument; // the version it was computed against
    lsp::range range;                                // what to replace
    std::string newText;
    lsp::range showAt;                               // where to show it: the start of range's line(s)
};
struct next_edit_result { std::vector<next_edit_item> edits; };

struct execute_command_params {
    std::string command;
    json::array arguments;
    std::optional<json::value> workDoneToken;
};

// hearth/status. The daemon fills what it knows; `extra` is merged into the object.
struct status_result {
    std::string version;
    std::string model;               // model name ("" when none is loaded)
    std::string modelPath;
    uint64_t mappedBytes = 0;
    uint64_t kvBudgetBytes = 0;
    uint64_t kvUsedBytes = 0;
    uint32_t cacheSlots = 0;
    uint32_t cacheSlotsUsed = 0;
    uint32_t queueDepth = 0;
    uint32_t requestsInFlight = 0;
    double lastCompletionMs = 0;
    double promptTokensPerSecond = 0;
    double decodeTokensPerSecond = 0;
    uint64_t completionsShown = 0;
    uint64_t completionsAccepted = 0;
    uint64_t completionsRejected = 0;
    json::object extra;
};

struct log_message_params { int type = 3; std::string message; };
struct progress_params { json::value token; json::value value; };
struct cancel_params { json::value id; };   // integer or string

// Conversions. Readers throw field_error; writers never throw.
#define HEARTH_LSP_JSON(T)                                                   \
    T tag_invoke(const json::value_to_tag<T> &, const json::value & v);      \
    void tag_invoke(const json::value_from_tag &, json::value & v, const T & x)
HEARTH_LSP_JSON(position);
HEARTH_LSP_JSON(range);
HEARTH_LSP_JSON(text_document_identifier);
HEARTH_LSP_JSON(versioned_text_document_identifier);
HEARTH_LSP_JSON(text_document_item);
HEARTH_LSP_JSON(text_document_content_change_event);
HEARTH_LSP_JSON(did_open_params);
HEARTH_LSP_JSON(did_change_params);
HEARTH_LSP_JSON(did_close_params);
HEARTH_LSP_JSON(text_document_position_params);
HEARTH_LSP_JSON(did_save_params);
HEARTH_LSP_JSON(client_info);
HEARTH_LSP_JSON(initialize_params);
HEARTH_LSP_JSON(selected_completion_info);
HEARTH_LSP_JSON(inline_completion_context);
HEARTH_LSP_JSON(inline_completion_params);
HEARTH_LSP_JSON(command);
HEARTH_LSP_JSON(inline_completion_item);
HEARTH_LSP_JSON(inline_completion_list);
HEARTH_LSP_JSON(did_show_completion_params);
HEARTH_LSP_JSON(did_partially_accept_completion_params);
HEARTH_LSP_JSON(completion_feedback_params);
HEARTH_LSP_JSON(chat_params);
HEARTH_LSP_JSON(chat_result);
HEARTH_LSP_JSON(next_edit_params);
HEARTH_LSP_JSON(next_edit_item);
HEARTH_LSP_JSON(next_edit_result);
HEARTH_LSP_JSON(execute_command_params);
HEARTH_LSP_JSON(status_result);
HEARTH_LSP_JSON(log_message_params);
HEARTH_LSP_JSON(progress_params);
HEARTH_LSP_JSON(cancel_params);
#undef HEARTH_LSP_JSON
// Write-only: the capabilities are ours, never read back.
void tag_invoke(const json::value_from_tag &, json::value & v, const initialize_result & x);

// Builds a chat_params from hearth.explain / hearth.fix / hearth.ask; arguments[0] is
// {textDocument, range, prompt?}; prompt is required for hearth.ask.
result<chat_params> chat_params_from_command(const execute_command_params & p);

// Reads params of `method` as T; the error message names the method and the field path.
template <class T>
result<T> parse_params(const json::value & params, std::string_view method) {
    try {
        return json::value_to<T>(params);
    } catch (const field_error & e) {
        return fail(method, ": invalid params: ", e.path.empty() ? "params" : "params." + e.path, ": ", e.what());
    } catch (const std::exception & e) {
        return fail(method, ": invalid params: ", e.what());
    }
}

}  // namespace hearth::lsp
