#include "daemon/server/unix_client.h"

#include <cerrno>
#include <cstring>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/settings/runtime_dir.h"

namespace hearth::daemon {

int connect_unix(const std::string & path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
        const int e = errno;
        ::close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

bool write_all(int fd, const char * p, size_t n) {
    bool socket = true;
    while (n > 0) {
        // send() with MSG_NOSIGNAL: a daemon that closed on us is EPIPE, never SIGPIPE;
        // write() where fd is not a socket (a pipe to the editor).
        ssize_t w = socket ? ::send(fd, p, n, MSG_NOSIGNAL) : ::write(fd, p, n);
        if (w < 0 && errno == ENOTSOCK) {
            socket = false;
            continue;
        }
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

std::string daemon_socket_path(const std::optional<std::string> & socket_flag, const std::optional<std::string> & runtime_flag,
                               const std::string & config_socket, const std::string & config_runtime_dir) {
    const std::string runtime = runtime_flag.value_or(config_runtime_dir.empty() ? default_runtime_dir() : config_runtime_dir);
    std::string socket = socket_flag.value_or(config_socket);
    if (socket.empty() || socket == "none") socket = runtime + "/hearth.sock";
    return socket;
}

}  // namespace hearth::daemon
