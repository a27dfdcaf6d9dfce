#include "lsp/types.h"

#include "lsp/json_read.h"

namespace hearth::lsp {

std::string_view position_encoding_name(position_encoding e) {
    switch (e) {
    case position_encoding::utf8: return "utf-8";
    case position_encoding::utf16: return "utf-16";
    case position_encoding::utf32: return "utf-32";
    }
    return "utf-16";
}

using namespace detail;

// ---- basic structures

position tag_invoke(const json::value_to_tag<position> &, const json::value & v) {
    const auto & o = object_of(v);
    return position{field<uint32_t>(o, "line"), field<uint32_t>(o, "character")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const position & x) {
    v = json::object{{"line", x.line}, {"character", x.character}};
}

range tag_invoke(const json::value_to_tag<range> &, const json::value & v) {
    const auto & o = object_of(v);
    return range{field<position>(o, "start"), field<position>(o, "end")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const range & x) {
    v = json::object{{"start", json::value_from(x.start)}, {"end", json::value_from(x.end)}};
}

text_document_identifier tag_invoke(const json::value_to_tag<text_document_identifier> &, const json::value & v) {
    return text_document_identifier{field<std::string>(object_of(v), "uri")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const text_document_identifier & x) {
    v = json::object{{"uri", x.uri}};
}

versioned_text_document_identifier tag_invoke(const json::value_to_tag<versioned_text_document_identifier> &,
                                              const json::value & v) {
    const auto & o = object_of(v);
    return versioned_text_document_identifier{field<std::string>(o, "uri"), field<int32_t>(o, "version")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const versioned_text_document_identifier & x) {
    v = json::object{{"uri", x.uri}, {"version", x.version}};
}

text_document_item tag_invoke(const json::value_to_tag<text_document_item> &, const json::value & v) {
    const auto & o = object_of(v);
    return text_document_item{field<std::string>(o, "uri"), field<std::string>(o, "languageId"),
                              field<int32_t>(o, "version"), field<std::string>(o, "text")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const text_document_item & x) {
    v = json::object{{"uri", x.uri}, {"languageId", x.languageId}, {"version", x.version}, {"text", x.text}};
}

text_document_content_change_event tag_invoke(const json::value_to_tag<text_document_content_change_event> &,
                                              const json::value & v) {
    const auto & o = object_of(v);
    // rangeLength is deprecated and ignored: the range alone says what is replaced.
    return text_document_content_change_event{optional_field<range>(o, "range"), field<std::string>(o, "text")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const text_document_content_change_event & x) {
    json::object o;
    put_optional_range(o, "range", x.range);
    o["text"] = x.text;
    v = std::move(o);
}

// ---- text synchronisation

did_open_params tag_invoke(const json::value_to_tag<did_open_params> &, const json::value & v) {
    return did_open_params{field<text_document_item>(object_of(v), "textDocument")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const did_open_params & x) {
    v = json::object{{"textDocument", json::value_from(x.textDocument)}};
}

did_change_params tag_invoke(const json::value_to_tag<did_change_params> &, const json::value & v) {
    const auto & o = object_of(v);
    return did_change_params{field<versioned_text_document_identifier>(o, "textDocument"),
                             field<std::vector<text_document_content_change_event>>(o, "contentChanges")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const did_change_params & x) {
    json::array changes;
    for (const auto & c : x.contentChanges) changes.push_back(json::value_from(c));
    v = json::object{{"textDocument", json::value_from(x.textDocument)}, {"contentChanges", std::move(changes)}};
}

did_close_params tag_invoke(const json::value_to_tag<did_close_params> &, const json::value & v) {
    return did_close_params{field<text_document_identifier>(object_of(v), "textDocument")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const did_close_params & x) {
    v = json::object{{"textDocument", json::value_from(x.textDocument)}};
}

text_document_position_params tag_invoke(const json::value_to_tag<text_document_position_params> &, const json::value & v) {
    const auto & o = object_of(v);
    return text_document_position_params{field<text_document_identifier>(o, "textDocument"), field<position>(o, "position")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const text_document_position_params & x) {
    v = json::object{{"textDocument", json::value_from(x.textDocument)}, {"position", json::value_from(x.position)}};
}

did_save_params tag_invoke(const json::value_to_tag<did_save_params> &, const json::value & v) {
    const auto & o = object_of(v);
    return did_save_params{field<text_document_identifier>(o, "textDocument"), optional_field<std::string>(o, "text")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const did_save_params & x) {
    json::object o{{"textDocument", json::value_from(x.textDocument)}};
    if (x.text) o["text"] = *x.text;
    v = std::move(o);
}

// ---- initialize

client_info tag_invoke(const json::value_to_tag<client_info> &, const json::value & v) {
    const auto & o = object_of(v);
    return client_info{field<std::string>(o, "name"), optional_field<std::string>(o, "version")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const client_info & x) {
    json::object o{{"name", x.name}};
    if (x.version) o["version"] = *x.version;
    v = std::move(o);
}

initialize_params tag_invoke(const json::value_to_tag<initialize_params> &, const json::value & v) {
    const auto & o = object_of(v);
    initialize_params p;
    p.processId = optional_field<int64_t>(o, "processId");
    p.clientInfo = optional_field<client_info>(o, "clientInfo");
    p.rootUri = optional_field<std::string>(o, "rootUri");
    if (const json::value * io = o.if_contains("initializationOptions")) p.initializationOptions = *io;
    // capabilities is required by the spec; its parts we read are optional.
    const json::value * caps = o.if_contains("capabilities");
    if (!caps) throw field_error("capabilities", "missing required field");
    if (!caps->is_object()) throw field_error("capabilities", std::string("expected object, got ") + kind_name(*caps));
    const auto & co = caps->get_object();
    try {
        if (const json::value * g = co.if_contains("general"); g && !g->is_null()) {
            try {
                const auto & go = object_of(*g);
                if (auto enc = optional_field<std::vector<std::string>>(go, "positionEncodings"))
                    p.capabilities.general.positionEncodings = std::move(*enc);
            } catch (const field_error & e) {
                throw field_error(join("general", e.path), e.what());
            }
        }
        if (const json::value * w = co.if_contains("window"); w && !w->is_null()) {
            try {
                p.capabilities.window.workDoneProgress =
                    optional_field<bool>(object_of(*w), "workDoneProgress").value_or(false);
            } catch (const field_error & e) {
                throw field_error(join("window", e.path), e.what());
            }
        }
    } catch (const field_error & e) {
        throw field_error(join("capabilities", e.path), e.what());
    }
    return p;
}
void tag_invoke(const json::value_from_tag &, json::value & v, const initialize_params & x) {
    json::object o;
    o["processId"] = x.processId ? json::value(*x.processId) : json::value(nullptr);
    if (x.clientInfo) o["clientInfo"] = json::value_from(*x.clientInfo);
    if (x.rootUri) o["rootUri"] = *x.rootUri;
    json::array enc;
    for (const auto & e : x.capabilities.general.positionEncodings) enc.emplace_back(e);
    o["capabilities"] = json::object{{"general", json::object{{"positionEncodings", std::move(enc)}}},
                                     {"window", json::object{{"workDoneProgress", x.capabilities.window.workDoneProgress}}}};
    if (!x.initializationOptions.is_null()) o["initializationOptions"] = x.initializationOptions;
    v = std::move(o);
}

void tag_invoke(const json::value_from_tag &, json::value & v, const initialize_result & x) {
    json::object caps;
    caps["positionEncoding"] = position_encoding_name(x.positionEncoding);
    // change 2 = Incremental; save without text (the buffer is already in sync).
    caps["textDocumentSync"] = json::object{{"openClose", true}, {"change", 2}, {"save", json::object{{"includeText", false}}}};
    caps["inlineCompletionProvider"] = true;
    caps["executeCommandProvider"] = json::object{
        {"commands", json::array{command_explain, command_fix, command_ask, command_accept_completion}}};
    caps["experimental"] = json::object{
        {"hearth", json::object{{"methods", json::array{"hearth/chat", "hearth/status", "hearth/didAccept", "hearth/didReject", "hearth/cursorRest", "hearth/nextEdit"}}}}};
    v = json::object{{"capabilities", std::move(caps)},
                     {"serverInfo", json::object{{"name", x.serverInfo.name}, {"version", x.serverInfo.version}}}};
}

}  // namespace hearth::lsp
