// UTF-8 checks for text that leaves the server: every outgoing body is made valid UTF-8
// (an invalid byte becomes U+FFFD) because JSON must be, and a client's parser would
// otherwise drop the whole message. Model output arrives in token pieces that may split a
// character; utf8_complete_prefix() finds where a piece can be cut without splitting one.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hearth::lsp {

bool is_valid_utf8(std::string_view s);
// Each maximal invalid subsequence becomes U+FFFD (as the Unicode standard recommends).
std::string to_valid_utf8(std::string_view s);
// Length of the longest prefix of s that does not end inside an unfinished (but so far
// valid) multi-byte sequence; the rest (at most 3 bytes) may be completed by later input.
size_t utf8_complete_prefix(std::string_view s);

}  // namespace hearth::lsp
