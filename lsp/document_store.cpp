#include "lsp/document_store.h"

#include <algorithm>

namespace hearth::lsp {

namespace {

// Length of the UTF-8 sequence led by `c`; a stray continuation or invalid byte counts as
// one byte (the JSON layer only hands us valid UTF-8, but edits must never crash on bytes).
size_t sequence_length(unsigned char c) {
    if (c < 0x80) return 1;
    if (c >= 0xf0 && c < 0xf8) return 4;
    if (c >= 0xe0) return c < 0xf0 ? 3 : 1;
    if (c >= 0xc0) return 2;
    return 1;
}

uint32_t units_of(size_t seq_len, position_encoding e) {
    switch (e) {
    case position_encoding::utf8: return static_cast<uint32_t>(seq_len);
    case position_encoding::utf16: return seq_len == 4 ? 2 : 1;   // astral planes: a surrogate pair
    case position_encoding::utf32: return 1;
    }
    return 1;
}

bool is_continuation(unsigned char c) { return (c & 0xc0) == 0x80; }

}  // namespace

document::document(std::string uri, std::string language_id, int32_t version, std::string text,
                   position_encoding encoding)
    : uri_(std::move(uri)), language_id_(std::move(language_id)), version_(version), text_(std::move(text)),
      encoding_(encoding) {
    reindex();
}

void document::reindex() {
    // A line starts after "\n", after "\r\n", and after a "\r" not followed by "\n".
    line_starts_.clear();
    line_starts_.push_back(0);
    const size_t n = text_.size();
    const char * t = text_.data();
    for (size_t i = 0; i < n; ++i) {
        const char c = t[i];
        if (c == '\n') {
            line_starts_.push_back(i + 1);
        } else if (c == '\r') {
            if (i + 1 < n && t[i + 1] == '\n') ++i;
            line_starts_.push_back(i + 1);
        }
    }
}

std::pair<size_t, size_t> document::line_span(uint32_t line) const {
    if (line >= line_starts_.size()) return {text_.size(), text_.size()};
    const size_t begin = line_starts_[line];
    if (line + 1 == line_starts_.size()) return {begin, text_.size()};
    size_t end = line_starts_[line + 1];
    if (end > begin && text_[end - 1] == '\n') --end;
    if (end > begin && text_[end - 1] == '\r') --end;
    return {begin, end};
}

size_t document::offset_of(position p) const {
    if (p.line >= line_starts_.size()) return text_.size();
    const auto [begin, end] = line_span(p.line);
    size_t off = begin;
    uint32_t count = 0;
    while (off < end && count < p.character) {
        const size_t len = std::min(sequence_length(static_cast<unsigned char>(text_[off])), end - off);
        const uint32_t u = units_of(len, encoding_);
        if (count + u > p.character) break;   // inside this code point: snap back to its start
        count += u;
        off += len;
    }
    return off;
}

position document::position_of(size_t offset) const {
    offset = std::min(offset, text_.size());
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const auto line = static_cast<uint32_t>((it - line_starts_.begin()) - 1);
    const auto [begin, end] = line_span(line);
    offset = std::min(offset, end);   // inside a CRLF: the end of the line's content
    while (offset > begin && is_continuation(static_cast<unsigned char>(text_[offset]))) --offset;
    uint32_t count = 0;
    size_t off = begin;
    while (off < offset) {
        const size_t len = std::min(sequence_length(static_cast<unsigned char>(text_[off])), offset - off);
        count += units_of(len, encoding_);
        off += len;
    }
    return position{line, count};
}

uint32_t document::units(std::string_view utf8, position_encoding e) {
    uint32_t count = 0;
    for (size_t off = 0; off < utf8.size();) {
        const size_t len = std::min(sequence_length(static_cast<unsigned char>(utf8[off])), utf8.size() - off);
        count += units_of(len, e);
        off += len;
    }
    return count;
}

void document::apply(const text_document_content_change_event & change) {
    const auto now = edit_history::clock::now();
    if (!change.range) {
        history_.record_full(text_, change.text, now);
        text_ = change.text;
    } else {
        size_t b = offset_of(change.range->start);
        size_t e = offset_of(change.range->end);
        if (e < b) std::swap(b, e);   // a reversed range means the same span
        history_.record(b, std::string_view(text_).substr(b, e - b), change.text, now);
        text_.replace(b, e - b, change.text);
        reindex_edit(b, e, change.text.size());
        return;
    }
    reindex();
}

bool document::starts_line(size_t q) const {
    if (q == 0) return true;
    const char prev = text_[q - 1];
    return prev == '\n' || (prev == '\r' && (q == text_.size() || text_[q] != '\n'));
}

void document::reindex_edit(size_t b, size_t e, size_t inserted) {
    // Whether q starts a line depends on text[q-1] and text[q] only. So starts before b and
    // after e (shifted) are unchanged, and only q in [b, b + inserted] must be looked at again.
    const auto keep_before = std::lower_bound(line_starts_.begin() + 1, line_starts_.end(), b);
    const auto keep_after = std::upper_bound(line_starts_.begin(), line_starts_.end(), e);
    std::vector<size_t> tail(keep_after, line_starts_.end());
    for (size_t & p : tail) p = p - e + b + inserted;
    line_starts_.erase(keep_before, line_starts_.end());
    for (size_t q = std::max<size_t>(b, 1); q <= b + inserted; ++q) {
        if (starts_line(q)) line_starts_.push_back(q);
    }
    line_starts_.insert(line_starts_.end(), tail.begin(), tail.end());
}

status document_store::open(const did_open_params & p) {
    const auto & item = p.textDocument;
    if (item.text.size() > limits_.max_document_bytes) {
        return fail("didOpen ", item.uri, ": document of ", item.text.size(), " bytes exceeds the limit of ",
                    limits_.max_document_bytes, " bytes; not opened");
    }
    auto it = docs_.find(item.uri);
    if (it != docs_.end()) {
        it->second = document(item.uri, item.languageId, item.version, item.text, encoding_);
        return fail("didOpen ", item.uri, ": already open; its content was replaced");
    }
    if (docs_.size() >= limits_.max_documents) {
        return fail("didOpen ", item.uri, ": ", limits_.max_documents,
                    " documents are open on this connection (the limit); not opened");
    }
    docs_.emplace(item.uri, document(item.uri, item.languageId, item.version, item.text, encoding_));
    return {};
}

status document_store::change(const did_change_params & p) {
    const auto & id = p.textDocument;
    auto it = docs_.find(id.uri);
    if (it == docs_.end()) return fail("didChange ", id.uri, ": document is not open");
    document & doc = it->second;
    if (id.version <= doc.version()) {
        return fail("didChange ", id.uri, ": version ", id.version, " is not newer than ", doc.version(),
                    "; change ignored");
    }
    for (const auto & c : p.contentChanges) {
        doc.apply(c);
        if (doc.text().size() > limits_.max_document_bytes) {
            const size_t n = doc.text().size();
            docs_.erase(it);
            return fail("didChange ", id.uri, ": document grew to ", n, " bytes, past the limit of ",
                        limits_.max_document_bytes, " bytes; it was closed");
        }
    }
    doc.set_version(id.version);
    return {};
}

status document_store::close(const did_close_params & p) {
    if (docs_.erase(p.textDocument.uri) == 0) return fail("didClose ", p.textDocument.uri, ": document is not open");
    return {};
}

status document_store::save(const did_save_params & p) {
    auto it = docs_.find(p.textDocument.uri);
    if (it == docs_.end()) return fail("didSave ", p.textDocument.uri, ": document is not open");
    if (p.text) {
        if (p.text->size() > limits_.max_document_bytes) {
            docs_.erase(it);
            return fail("didSave ", p.textDocument.uri, ": text of ", p.text->size(), " bytes exceeds the limit of ",
                        limits_.max_document_bytes, " bytes; the document was closed");
        }
        it->second.apply(text_document_content_change_event{std::nullopt, *p.text});
    }
    return {};
}

const document * document_store::find(std::string_view uri) const {
    auto it = docs_.find(std::string(uri));
    return it == docs_.end() ? nullptr : &it->second;
}

}  // namespace hearth::lsp
