// next_edit_pipeline: the one path from a document, its cursor and its recent edits to the
// edits predicted to follow (hearth/nextEdit, daemon/services/next_edit_service.h):
//   the window (window_lines around the cursor's line, stretched to the latest edit when it is
//   near) and the recent edits as whole-line hunks -> model_service::next_edit, which prompts
//   in the model's next-edit format and returns the window rewritten -> window_diff's minimal
//   edits -> the confidence rules below -> edits at byte offsets of the document.
// Confidence: "no edit" is the frequent, normal answer. Nothing is predicted when the rewrite
// could not be read; when it changes more than half the window's lines, and more than four
// (a rewrite, not an edit); when it brings back the window as it was before the latest edit
// (an undo). Single edits that change only whitespace, or that put back what the latest edit
// removed where it removed it, are dropped, and so is an edit that does not continue the recent
// edits (continues_recent_edits): on `hearth bench next-edit` the instruct models' false edits
// were rewrites of code the user had not touched (a call wrapped, a line deleted).
// Thread-safety: request_for() and the free functions are pure; run() and warm_up() follow
// model_service's rule (the compute worker only).
#pragma once

#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "daemon/engine/model_service.h"
#include "daemon/settings/config.h"

namespace hearth::daemon {

// One recent edit as the document's edit history keeps it: at `offset` of the CURRENT text,
// `inserted` stands where `removed` was.
struct recent_edit {
    size_t offset = 0;
    std::string removed;
    std::string inserted;
};

struct next_edit_ask {
    std::string uri;
    std::string language_id;
    std::string text;                  // the document now
    size_t cursor = 0;                 // byte offset in text
    std::vector<recent_edit> edits;    // oldest first
};

// A predicted edit: [begin, end) of the document's text becomes `text`.
struct predicted_edit {
    size_t begin = 0;
    size_t end = 0;
    std::string text;
    bool operator==(const predicted_edit &) const = default;
};

// The byte range of the window a request at the cursor rewrites: whole lines.
struct window_span {
    size_t begin = 0;
    size_t end = 0;
};
window_span next_edit_window(const next_edit_ask & ask, int32_t window_lines);

// The confidence rules (see the top) over the rewrite of `window` of ask.text; offsets in the result
// are the document's.
std::vector<predicted_edit> confident_edits(const next_edit_ask & ask, window_span window, std::string_view rewritten);

// Whether replacing `old` by `text` continues what the recent edits did: every word it brings in
// or takes out (a word: a run of letters, digits, '_' and non-ASCII bytes; numbers aside, as a
// version bumped) is a word those edits typed or removed; an edit of punctuation and spaces
// alone must repeat what one of them typed or removed.
bool continues_recent_edits(std::string_view old, std::string_view text, const std::vector<recent_edit> & edits);

// The file's path as the model sees it: the URI without its scheme and authority.
std::string path_of_uri(std::string_view uri);

class next_edit_pipeline {
public:
    next_edit_pipeline(model_service * model, next_edit_settings settings) : model_(model), settings_(settings) {}

    const next_edit_settings & settings() const { return settings_; }
    // The model's request (window, hunks, context) and the window it covers.
    std::pair<next_edit_request, window_span> request_for(const next_edit_ask & ask) const;
    // The predicted edits; empty when none is predicted with enough confidence.
    result<std::vector<predicted_edit>> run(const next_edit_ask & ask, std::stop_token stop);
    // The prompt of a request at this place into the model's slot, nothing generated.
    hearth::status warm_up(const next_edit_ask & ask, std::stop_token stop);

private:
    model_service * model_;
    next_edit_settings settings_;
};

}  // namespace hearth::daemon
