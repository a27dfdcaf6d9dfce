// Test helper for tests/python/quant_oracle.py: dequantizes raw tensor bytes of a GGUF file.
//   hearth_dequantize_tensors FILE  < jobs
// Each job line is "<ggml type id> <element count> <absolute byte offset>"; for each, the floats
// are written to stdout in job order. Every ISA variant this CPU has dequantizes the bytes and
// must agree bit for bit with the scalar reference, otherwise the tool stops with an error.
// It reads the file directly (no GGUF parsing): the Python side owns the layout.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

#include "kernels/cpu/dispatch.h"
#include "kernels/quant.h"

using namespace hearth::kernels;

int main(int argc, char ** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s FILE < jobs (\"<type> <n> <offset>\" per line)\n", argv[0]);
        return 2;
    }
    const int fd = open(argv[1], O_RDONLY);
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0) {
        std::fprintf(stderr, "%s: cannot open: %s\n", argv[1], std::strerror(errno));
        return 1;
    }
    const size_t file_size = static_cast<size_t>(st.st_size);
    void * map = mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        std::fprintf(stderr, "%s: mmap failed: %s\n", argv[1], std::strerror(errno));
        return 1;
    }
    const auto * base = static_cast<const uint8_t *>(map);
    uint32_t type_id = 0;
    int64_t n = 0;
    uint64_t offset = 0;
    std::vector<float> out, other;
    std::vector<uint8_t> aligned;
    for (int64_t job = 0; std::cin >> type_id >> n >> offset; ++job) {
        const auto & info = tensor_type_info(type_id);
        if (!info.known || !is_supported(static_cast<tensor_type>(type_id)) || n <= 0 || n % info.block_size != 0) {
            std::fprintf(stderr, "job %lld: type %u with %lld elements is not dequantizable\n",
                         static_cast<long long>(job), type_id, static_cast<long long>(n));
            return 1;
        }
        const auto t = static_cast<tensor_type>(type_id);
        const size_t bytes = row_size(t, n);
        if (offset > file_size || bytes > file_size - offset) {
            std::fprintf(stderr, "job %lld: bytes [%llu, %llu) past the end of the file (%zu bytes)\n",
                         static_cast<long long>(job), static_cast<unsigned long long>(offset),
                         static_cast<unsigned long long>(offset + bytes), file_size);
            return 1;
        }
        // Blocks need 4-byte alignment at most; GGUF data is 32-byte aligned, but copy if a job is not.
        const uint8_t * src = base + offset;
        if (offset % 4 != 0) {
            aligned.assign(src, src + bytes);
            src = aligned.data();
        }
        out.resize(static_cast<size_t>(n));
        other.resize(static_cast<size_t>(n));
        cpu::quant_kernels_for(cpu::isa::scalar)[t].dequantize_row(src, out.data(), n);
        for (cpu::isa isa : cpu::available_isas()) {
            cpu::quant_kernels_for(isa)[t].dequantize_row(src, other.data(), n);
            if (std::memcmp(out.data(), other.data(), out.size() * sizeof(float)) != 0) {
                std::fprintf(stderr, "job %lld (%s): isa %s differs from the scalar reference\n",
                             static_cast<long long>(job), std::string(info.name).c_str(),
                             std::string(cpu::isa_name(isa)).c_str());
                return 1;
            }
        }
        if (std::fwrite(out.data(), sizeof(float), out.size(), stdout) != out.size()) return 1;
    }
    std::fflush(stdout);
    munmap(map, file_size);
    close(fd);
    return 0;
}
