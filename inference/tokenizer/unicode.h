// UTF-8 helpers and GPT-2's byte-level alphabet for the tokenizer.
// Byte-level BPE vocabularies spell every raw byte as one printable code point
// (bytes_to_unicode: '!'..'~', '¡'..'¬', '®'..'ÿ' map to themselves, the other 68 bytes to
// U+0100..U+0143), so any byte string, valid UTF-8 or not, has a spelling in the vocabulary.
// Thread-safety: pure functions over immutable tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hearth::inference::tokenizer {

// Length of the UTF-8 sequence announced by lead byte `c` (1 for ASCII, continuation and
// invalid bytes), as llama.cpp splits text into symbols; never more than what remains.
size_t utf8_seq_len(unsigned char c);

// Number of bytes at the end of `s` that form an incomplete (but so far valid) UTF-8
// sequence that more bytes could complete; 0 when `s` ends on a boundary.
size_t utf8_incomplete_tail(std::string_view s);

// Appends the UTF-8 encoding of code point `cp` (<= 0x10FFFF) to `out`.
void utf8_append(std::string & out, uint32_t cp);

// The byte-level spelling of one raw byte (1 or 2 bytes of UTF-8).
std::string_view byte_to_symbol(uint8_t b);

// Decodes a byte-level spelled token back to raw bytes; nullopt when some code point is
// not in the byte-level alphabet.
std::optional<std::string> symbols_to_bytes(std::string_view spelled);

// Spells raw bytes in the byte-level alphabet.
std::string bytes_to_symbols(std::string_view raw);

}  // namespace hearth::inference::tokenizer
