// The open documents of one connection, kept in sync by didOpen / didChange (incremental
// ranges and full text) / didClose / didSave. Text is stored as UTF-8 with a line index;
// LSP positions are counted in the connection's negotiated encoding (UTF-16 code units
// unless the client offered utf-8 or utf-32), converted exactly, non-ASCII included.
// Position rules (as vscode-languageserver-textdocument does them):
//  - a line is ended by "\n", "\r\n" or "\r"; `character` counts within the line, EOL excluded;
//  - a character past the line's end clamps to the line's end (so a position can never fall
//    between the "\r" and "\n" of a CRLF); a line past the last clamps to the document's end;
//  - a character that falls inside one code point (the middle of a UTF-16 surrogate pair, or
//    inside a UTF-8 sequence with utf-8 positions) snaps back to the start of that code point,
//    so an edit can never split a character.
// Each document keeps its recent edits (edit_history.h); closing it forgets them.
// A didChange whose version is not newer than the stored one is ignored (logged). A change
// that would grow a document past max_document_bytes closes that document (the next request
// on it fails with "not open") rather than keep a copy that no longer matches the editor's.
// Thread-safety: none; owned and used by the connection's server thread. Handlers that run
// elsewhere copy what they need (text, version) while on that thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "lsp/edit_history.h"
#include "lsp/types.h"

namespace hearth::lsp {

class document {
public:
    document(std::string uri, std::string language_id, int32_t version, std::string text,
             position_encoding encoding);

    const std::string & uri() const { return uri_; }
    const std::string & language_id() const { return language_id_; }
    int32_t version() const { return version_; }
    const std::string & text() const { return text_; }   // UTF-8
    position_encoding encoding() const { return encoding_; }
    size_t line_count() const { return line_starts_.size(); }

    // Byte offset into text() of an LSP position (clamped and snapped as described above).
    size_t offset_of(position p) const;
    // LSP position of a byte offset (clamped to the text's size; an offset inside a code
    // point or a CRLF counts as the start of it).
    position position_of(size_t offset) const;
    // Byte range [begin, end) of a line's content, EOL excluded (line clamped).
    std::pair<size_t, size_t> line_span(uint32_t line) const;
    // Number of encoding units of a UTF-8 string (for insertText lengths, ranges).
    static uint32_t units(std::string_view utf8, position_encoding e);

    // Applies one change (and records it in history()); the version is set by the store after
    // all changes of a didChange.
    void apply(const text_document_content_change_event & change);
    // The recent edits, coalesced (lsp/edit_history.h); forgotten with the document.
    const edit_history & history() const { return history_; }
    void set_version(int32_t v) { version_ = v; }

private:
    void reindex();
    void reindex_edit(size_t begin, size_t end, size_t inserted);   // after replacing [begin, end)
    bool starts_line(size_t offset) const;
    std::string uri_;
    std::string language_id_;
    int32_t version_;
    std::string text_;
    position_encoding encoding_;
    std::vector<size_t> line_starts_;   // byte offset of each line's first byte; [0] = 0
    edit_history history_;
};

struct document_limits {
    size_t max_documents = 256;            // open documents per connection
    size_t max_document_bytes = 8u << 20;  // UTF-8 bytes of one document
};

class document_store {
public:
    explicit document_store(document_limits limits = {}) : limits_(limits) {}

    void set_encoding(position_encoding e) { encoding_ = e; }   // at initialize, before any open
    position_encoding encoding() const { return encoding_; }

    // Each returns an error for the client's log (the notification itself gets no reply).
    status open(const did_open_params & p);
    status change(const did_change_params & p);
    status close(const did_close_params & p);
    status save(const did_save_params & p);   // with text: replaces the content

    const document * find(std::string_view uri) const;
    size_t size() const { return docs_.size(); }
    const document_limits & limits() const { return limits_; }

private:
    document_limits limits_;
    position_encoding encoding_ = position_encoding::utf16;
    std::unordered_map<std::string, document> docs_;
};

}  // namespace hearth::lsp
