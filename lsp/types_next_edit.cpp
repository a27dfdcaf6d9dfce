// Conversions of hearth/nextEdit's params and result.
#include "lsp/json_read.h"
#include "lsp/types.h"

namespace hearth::lsp {

using namespace detail;

next_edit_params tag_invoke(const json::value_to_tag<next_edit_params> &, const json::value & v) {
    const auto & o = object_of(v);
    next_edit_params p{field<text_document_identifier>(o, "textDocument"), std::nullopt, field<position>(o, "position")};
    // The version is optional: the answer names the version it was computed against anyway.
    if (const auto * doc = o.if_contains("textDocument"); doc && doc->is_object())
        p.version = optional_field<int32_t>(doc->get_object(), "version");
    return p;
}
void tag_invoke(const json::value_from_tag &, json::value & v, const next_edit_params & x) {
    json::object doc{{"uri", x.textDocument.uri}};
    if (x.version) doc["version"] = *x.version;
    v = json::object{{"textDocument", std::move(doc)}, {"position", json::value_from(x.position)}};
}

next_edit_item tag_invoke(const json::value_to_tag<next_edit_item> &, const json::value & v) {
    const auto & o = object_of(v);
    return next_edit_item{field<std::string>(o, "id"), field<versioned_text_document_identifier>(o, "textDocument"),
                          field<range>(o, "range"), field<std::string>(o, "newText"), field<range>(o, "showAt")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const next_edit_item & x) {
    v = json::object{{"id", x.id},
                     {"textDocument", json::value_from(x.textDocument)},
                     {"range", json::value_from(x.range)},
                     {"newText", x.newText},
                     {"showAt", json::value_from(x.showAt)}};
}

next_edit_result tag_invoke(const json::value_to_tag<next_edit_result> &, const json::value & v) {
    const auto & o = object_of(v);
    return next_edit_result{field<std::vector<next_edit_item>>(o, "edits")};
}
void tag_invoke(const json::value_from_tag &, json::value & v, const next_edit_result & x) {
    json::array edits;
    for (const auto & e : x.edits) edits.push_back(json::value_from(e));
    v = json::object{{"edits", std::move(edits)}};
}

}  // namespace hearth::lsp
