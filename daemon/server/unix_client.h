// unix_client: the client side of the daemon's Unix socket, for the commands that talk to a
// running daemon (`hearth lsp` relays an editor's bytes, `hearth status` asks once).
// Both ignore SIGPIPE as well, and report a refused or dropped connection with a message and
// exit code 1.
// Thread-safety: plain functions on file descriptors.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace hearth::daemon {

// A connected socket, or -1 (errno says why).
int connect_unix(const std::string & path);

// Writes all n bytes (retrying short writes and EINTR); false on an error (errno says
// which). A socket whose peer has gone is EPIPE, never SIGPIPE.
bool write_all(int fd, const char * p, size_t n);

// The socket a client should use: --socket, else the config's `socket`, else
// <runtime dir>/hearth.sock (runtime dir: --runtime-dir, the config's, or the default).
std::string daemon_socket_path(const std::optional<std::string> & socket_flag, const std::optional<std::string> & runtime_flag,
                               const std::string & config_socket, const std::string & config_runtime_dir);

}  // namespace hearth::daemon
