#include "inference/gguf/mapped_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hearth::inference::gguf {

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
    if (data_) ::munmap(const_cast<uint8_t *>(data_), size_);
    data_ = nullptr;
    size_ = 0;
}

}  // namespace hearth::inference::gguf
