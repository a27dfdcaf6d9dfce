// mapped_file: a whole file mapped read-only into memory (mmap, MAP_PRIVATE, PROT_READ).
// Nothing is copied: pages are read from the page cache on first touch, and the file is
// never written. The mapping lives as long as the object (move-only).
// A file cut short while it is mapped (truncated in place, or overwritten by a shorter one)
// makes the next read past its new end raise SIGBUS, anywhere, at any time: nothing can
// check for that before each read of a weight. So every mapping is registered, and a
// SIGBUS inside one ends the process with a message naming the file and the offset, on
// stderr and in the file set_fault_log_file() names, and exit code k_exit_mapped_file_changed;
// any other SIGBUS goes to the handler that was there before (the default: a core dump).
// Thread-safety: immutable after open(); bytes() may be read from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/result.h"

namespace hearth::inference::gguf {

// EX_IOERR (sysexits.h): the process ended because a file it read changed under it.
inline constexpr int k_exit_mapped_file_changed = 74;

class mapped_file {
public:
    // Opens and maps `path`. Refuses what is not a regular, non-empty, readable file.
    static result<mapped_file> open(const std::string & path);

    // Where the SIGBUS message also goes (appended), besides stderr; "" for stderr only.
    static void set_fault_log_file(const std::string & path);

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
