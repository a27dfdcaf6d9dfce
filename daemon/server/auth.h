// auth: the shared secret that guards the loopback TCP transport. Any local process can
// connect to a loopback port, so a TCP client must first prove it can read the token file
// (mode 0600 in the private runtime directory, i.e. it runs as the same user).
// The token is 256 random bits from OpenSSL's CSPRNG, written as 64 hex characters,
// fresh at every daemon start. The client's first framed message must be
//   {"jsonrpc":"2.0","method":"hearth/auth","params":{"token":"<64 hex>"}}
// (with an "id" it is a request and gets a `null` result on success). Anything else first,
// or a wrong token, closes the connection without serving a byte of LSP. The comparison
// takes the same time wherever the tokens differ (CRYPTO_memcmp).
// Thread-safety: free functions; an auth_gate belongs to one connection.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace hearth::daemon {

inline constexpr size_t k_token_hex_chars = 64;   // 256 bits

result<std::string> generate_token();              // 64 lowercase hex characters
// Writes the token to `path` with mode 0600 (written to a temporary file, then renamed,
// so a reader never sees half a token).
status write_token_file(const std::string & path, std::string_view token);
// Reads a token file, refusing one that other users could read or that is malformed.
result<std::string> read_token_file(const std::string & path);

// Constant-time equality for equal lengths; different lengths compare unequal at once
// (the length is public: always 64).
bool tokens_equal(std::string_view a, std::string_view b);

// The first message of a TCP connection, parsed from raw bytes before the LSP framing
// takes over, with small fixed limits (a header of at most 1 KiB, a body of at most 4 KiB).
class auth_gate {
public:
    enum class state { need_more, accepted, rejected };

    explicit auth_gate(std::string expected_token) : expected_(std::move(expected_token)) {}

    // Feeds bytes. After `accepted`, leftover() holds the bytes that followed the auth
    // message (the start of the LSP stream); after `rejected`, reason() says why.
    state feed(std::string_view bytes);
    state current() const { return state_; }
    const std::string & leftover() const { return leftover_; }
    const std::string & reason() const { return reason_; }
    // The request id if the auth message was a request (the reply goes to it), else null.
    const std::optional<std::string> & reply_id_json() const { return reply_id_json_; }

private:
    state reject(std::string why);
    state check_body(std::string_view body);

    std::string expected_;
    std::string buf_;
    std::string leftover_;
    std::string reason_;
    std::optional<std::string> reply_id_json_;
    state state_ = state::need_more;
};

}  // namespace hearth::daemon
