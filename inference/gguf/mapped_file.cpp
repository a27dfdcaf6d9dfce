#include "inference/gguf/mapped_file.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hearth::inference::gguf {

namespace {

// The registry the SIGBUS handler reads. Only async-signal-safe work happens there: plain
// loads of atomics, writes to fixed buffers, write(2), open(2) and _exit(2).
struct registered_mapping {
    std::atomic<const uint8_t *> start{nullptr};
    std::atomic<size_t> size{0};
    char path[512] = {};
};
constexpr int k_max_mappings = 16;
registered_mapping g_mappings[k_max_mappings];
std::mutex g_registry_mu;   // registration only (never taken by the handler)

char g_log_path[4096] = {};
std::atomic<bool> g_log_path_set{false};
struct sigaction g_previous_bus {};

// Appends to a fixed buffer without allocating.
struct message {
    char text[2048];
    size_t n = 0;
    void add(const char * s) {
        while (*s && n + 1 < sizeof text) text[n++] = *s++;
    }
    void add(uint64_t v) {
        char digits[24];
        int k = 0;
        do digits[k++] = static_cast<char>('0' + v % 10);
        while ((v /= 10) != 0);
        while (k > 0 && n + 1 < sizeof text) text[n++] = digits[--k];
    }
};

void write_all_raw(int fd, const char * p, size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        p += w;
        n -= static_cast<size_t>(w);
    }
}

void on_bus_error(int sig, siginfo_t * info, void * context) {
    const auto * addr = static_cast<const uint8_t *>(info->si_addr);
    for (const auto & m : g_mappings) {
        const uint8_t * start = m.start.load(std::memory_order_acquire);
        const size_t size = m.size.load(std::memory_order_acquire);
        if (!start || addr < start || addr >= start + size) continue;
        message msg;
        msg.add("the model file '");
        msg.add(m.path);
        msg.add("' changed under the daemon: reading byte ");
        msg.add(static_cast<uint64_t>(addr - start));
        msg.add(" of the ");
        msg.add(static_cast<uint64_t>(size));
        msg.add(" mapped failed (the file was truncated or rewritten in place); exiting. "
                "Restore the file, or replace it with a new one (write it elsewhere, then rename it over), "
                "and start again.\n");
        write_all_raw(2, "hearth: ", 8);
        write_all_raw(2, msg.text, msg.n);
        if (g_log_path_set.load(std::memory_order_acquire)) {
            const int fd = ::open(g_log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
            if (fd >= 0) {
                write_all_raw(fd, "[critical] ", 11);
                write_all_raw(fd, msg.text, msg.n);
                ::close(fd);
            }
        }
        ::_exit(k_exit_mapped_file_changed);
    }
    // Not a mapped file: whoever handled SIGBUS before us does, as if we were not here.
    if (g_previous_bus.sa_flags & SA_SIGINFO) {
        if (g_previous_bus.sa_sigaction) return g_previous_bus.sa_sigaction(sig, info, context);
    } else if (g_previous_bus.sa_handler != SIG_DFL && g_previous_bus.sa_handler != SIG_IGN) {
        return g_previous_bus.sa_handler(sig);
    }
    // The default: restore it; the faulting access runs again and dumps core (a signal sent
    // with kill() is raised again instead).
    ::signal(sig, SIG_DFL);
    if (info->si_code <= 0) ::raise(sig);
}

void install_bus_handler() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction sa {};
        sa.sa_sigaction = on_bus_error;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGBUS, &sa, &g_previous_bus);
    });
}

void register_mapping(const uint8_t * start, size_t size, const std::string & path) {
    install_bus_handler();
    std::lock_guard lock(g_registry_mu);
    for (auto & m : g_mappings) {
        if (m.start.load(std::memory_order_relaxed)) continue;
        const size_t n = std::min(path.size(), sizeof m.path - 1);
        std::memcpy(m.path, path.data(), n);
        m.path[n] = '\0';
        m.size.store(size, std::memory_order_release);
        m.start.store(start, std::memory_order_release);
        return;
    }
    // More than k_max_mappings files mapped at once: this one's SIGBUS is not explained.
}

void unregister_mapping(const uint8_t * start) {
    std::lock_guard lock(g_registry_mu);
    for (auto & m : g_mappings)
        if (m.start.load(std::memory_order_relaxed) == start) m.start.store(nullptr, std::memory_order_release);
}

}  // namespace

void mapped_file::set_fault_log_file(const std::string & path) {
    std::lock_guard lock(g_registry_mu);
    g_log_path_set.store(false, std::memory_order_release);
    if (path.empty() || path.size() >= sizeof g_log_path) return;
    std::memcpy(g_log_path, path.c_str(), path.size() + 1);
    g_log_path_set.store(true, std::memory_order_release);
}

result<mapped_file> mapped_file::open(const std::string & path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(path, ": cannot open: ", std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return fail(path, ": cannot stat: ", std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return fail(path, ": not a regular file");
    }
    if (st.st_size <= 0) {
        ::close(fd);
        return fail(path, ": file is empty (expected a GGUF file)");
    }
    const size_t size = static_cast<size_t>(st.st_size);
    void * p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);  // the mapping keeps its own reference to the file
    if (p == MAP_FAILED) return fail(path, ": cannot map ", size, " bytes: ", std::strerror(err));
    register_mapping(static_cast<const uint8_t *>(p), size, path);
    return mapped_file(static_cast<const uint8_t *>(p), size);
}

mapped_file::mapped_file(mapped_file && o) noexcept : data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
}

mapped_file & mapped_file::operator=(mapped_file && o) noexcept {
    if (this != &o) {
        unmap();
        data_ = o.data_;
        size_ = o.size_;
        o.data_ = nullptr;
        o.size_ = 0;
    }
    return *this;
}

mapped_file::~mapped_file() { unmap(); }

void mapped_file::unmap() {
    if (data_) {
        unregister_mapping(data_);
        ::munmap(const_cast<uint8_t *>(data_), size_);
    }
    data_ = nullptr;
    size_ = 0;
}

}  // namespace hearth::inference::gguf
