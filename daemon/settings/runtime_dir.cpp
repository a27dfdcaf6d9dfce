#include "daemon/settings/runtime_dir.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hearth::daemon {

std::string default_runtime_dir() {
    const char * xdg = std::getenv("XDG_RUNTIME_DIR");
    if (xdg && xdg[0] == '/') return std::string(xdg) + "/hearth";
    return "/tmp/hearth-" + std::to_string(::getuid());
}

std::string default_socket_path() { return default_runtime_dir() + "/hearth.sock"; }
std::string token_path(const std::string & runtime_dir) { return runtime_dir + "/hearth.token"; }
std::string lock_path(const std::string & runtime_dir) { return runtime_dir + "/hearth.lock"; }

static status check_private_dir(const std::string & path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return fail(path, ": ", std::strerror(errno));
    if (S_ISLNK(st.st_mode)) return fail(path, ": is a symlink; expected a directory owned by this user");
    if (!S_ISDIR(st.st_mode)) return fail(path, ": not a directory");
    if (st.st_uid != ::getuid())
        return fail(path, ": owned by uid ", static_cast<uint64_t>(st.st_uid), ", expected this user (uid ",
                    static_cast<uint64_t>(::getuid()), ")");
    if ((st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
        return fail(path, ": mode ", mode, " lets other users in; expected 700 (chmod 700 ", path, ")");
    }
    return {};
}

status ensure_private_dir(const std::string & path) {
    if (path.empty() || path[0] != '/') return fail("runtime directory '", path, "': expected an absolute path");
    // Create missing parents (e.g. the /tmp/hearth-<uid> case has none, but a --socket in a
    // fresh directory may); only the last component must be private.
    for (size_t i = 1; i < path.size(); ++i) {
        if (path[i] != '/') continue;
        const std::string parent = path.substr(0, i);
        if (::mkdir(parent.c_str(), 0700) != 0 && errno != EEXIST) return fail(parent, ": ", std::strerror(errno));
    }
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return fail(path, ": ", std::strerror(errno));
    return check_private_dir(path);
}

result<file_lock> file_lock::acquire(const std::string & path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return fail("lock file ", path, ": ", std::strerror(errno));
    while (::flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        const int e = errno;
        ::close(fd);
        return fail("lock file ", path, ": flock: ", std::strerror(e));
    }
    return file_lock(fd);
}

result<file_lock> file_lock::try_acquire(const std::string & path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return fail("lock file ", path, ": ", std::strerror(errno));
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        const int e = errno;
        ::close(fd);
        if (e == EWOULDBLOCK) return fail("lock file ", path, ": held by another process");
        return fail("lock file ", path, ": flock: ", std::strerror(e));
    }
    return file_lock(fd);
}

file_lock & file_lock::operator=(file_lock && o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = o.fd_;
        o.fd_ = -1;
    }
    return *this;
}

file_lock::~file_lock() {
    if (fd_ >= 0) ::close(fd_);   // closing the last descriptor releases the flock
}

}  // namespace hearth::daemon
