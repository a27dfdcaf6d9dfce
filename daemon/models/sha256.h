// sha256: SHA-256 of bytes and files, as lowercase hex (OpenSSL's EVP digest).
// Thread-safety: a sha256 object belongs to one thread; the free functions are pure.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "base/result.h"

namespace hearth::daemon {

class sha256 {
public:
    sha256();
    ~sha256();
    sha256(const sha256 &) = delete;
    sha256 & operator=(const sha256 &) = delete;
    void update(std::span<const uint8_t> bytes);
    std::string hex();   // finishes; call once

private:
    struct ctx;
    std::unique_ptr<ctx> ctx_;
};

// Hashes a file; `on_progress(bytes so far)` is called after each block when given.
result<std::string> sha256_file(const std::string & path, const std::function<void(uint64_t)> & on_progress = {});

// True for 64 hex digits (either case).
bool is_sha256_hex(const std::string & s);

}  // namespace hearth::daemon
