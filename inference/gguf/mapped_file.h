// mapped_file: a whole file mapped read-only into memory (mmap, MAP_PRIVATE, PROT_READ).
// Nothing is copied: pages are read from the page cache on first touch, and the file is
// never written. The mapping lives as long as the object (move-only).
// Thread-safety: immutable after open(); bytes() may be read from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/result.h"

namespace hearth::inference::gguf {

class mapped_file {
public:
    // Opens and maps `path`. Refuses what is not a regular, non-empty, readable file.
    static result<mapped_file> open(const std::string & path);

    mapped_file() = default;
    mapped_file(mapped_file && o) noexcept;
    mapped_file & operator=(mapped_file && o) noexcept;
    mapped_file(const mapped_file &) = delete;
    mapped_file & operator=(const mapped_file &) = delete;
    ~mapped_file();

    std::span<const uint8_t> bytes() const { return {data_, size_}; }

private:
    mapped_file(const uint8_t * data, size_t size) : data_(data), size_(size) {}
    void unmap();

    const uint8_t * data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace hearth::inference::gguf
