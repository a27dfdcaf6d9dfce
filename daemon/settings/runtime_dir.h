// runtime_dir: where the daemon keeps its socket, lock file and TCP token, and the checks
// that make that place private: the directory is owned by the user, mode 0700, and not a
// symlink (else another local user could pre-create it and read the token or hijack the
// socket). Default: $XDG_RUNTIME_DIR/hearth, else /tmp/hearth-$UID.
// Also: the daemon lock (flock) that serialises "is a daemon running? else start one"
// between two editors starting at the same moment.
// Thread-safety: free functions; file_lock is owned by one thread.
#pragma once

#include <string>

#include "base/result.h"

namespace hearth::daemon {

// $XDG_RUNTIME_DIR/hearth if XDG_RUNTIME_DIR is set and absolute, else /tmp/hearth-<uid>.
std::string default_runtime_dir();
std::string default_socket_path();   // <runtime dir>/hearth.sock
std::string token_path(const std::string & runtime_dir);   // <runtime dir>/hearth.token
std::string lock_path(const std::string & runtime_dir);    // <runtime dir>/hearth.lock

// Creates the directory (and missing parents of it, 0700) or checks the existing one:
// a real directory, owned by this user, no access for group or others. An existing
// directory with looser permissions is refused, not silently fixed.
status ensure_private_dir(const std::string & path);

// An exclusive flock on a file, released by the destructor (or when the process dies, so
// a crashed starter never leaves the lock held).
class file_lock {
public:
    static result<file_lock> acquire(const std::string & path);   // blocks until held
    // Does not wait: an error if another process holds it (the message says so).
    static result<file_lock> try_acquire(const std::string & path);
    file_lock(file_lock && o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    file_lock & operator=(file_lock && o) noexcept;
    ~file_lock();

private:
    explicit file_lock(int fd) : fd_(fd) {}
    int fd_ = -1;
};

}  // namespace hearth::daemon
