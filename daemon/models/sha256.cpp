#include "daemon/models/sha256.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <openssl/evp.h>

namespace hearth::daemon {

struct sha256::ctx {
    EVP_MD_CTX * md = EVP_MD_CTX_new();
    ~ctx() { EVP_MD_CTX_free(md); }
};

sha256::sha256() : ctx_(std::make_unique<ctx>()) { EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr); }
sha256::~sha256() = default;

void sha256::update(std::span<const uint8_t> bytes) { EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size()); }

std::string sha256::hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_->md, digest, &n);
    static const char * digits = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < n; ++i) {
        out += digits[digest[i] >> 4];
        out += digits[digest[i] & 15];
    }
    return out;
}

result<std::string> sha256_file(const std::string & path, const std::function<void(uint64_t)> & on_progress) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(path, ": ", std::strerror(errno));
    sha256 h;
    std::vector<uint8_t> block(1 << 20);
    uint64_t done = 0;
    for (;;) {
        const ssize_t n = ::read(fd, block.data(), block.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int e = errno;
            ::close(fd);
            return fail(path, ": read failed at byte ", done, ": ", std::strerror(e));
        }
        if (n == 0) break;
        h.update({block.data(), static_cast<size_t>(n)});
        done += static_cast<uint64_t>(n);
        if (on_progress) on_progress(done);
    }
    ::close(fd);
    return h.hex();
}

bool is_sha256_hex(const std::string & s) {
    if (s.size() != 64) return false;
    for (const char c : s)
        if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

}  // namespace hearth::daemon
