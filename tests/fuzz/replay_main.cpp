// Runs every file of a seed corpus folder through a fuzz target once, so a plain
// (non-libFuzzer) build still checks that no seed crashes, hangs or trips a sanitizer.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size);

int main(int argc, char ** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    int n = 0;
    for (const auto & entry : std::filesystem::recursive_directory_iterator(argv[1])) {
        if (!entry.is_regular_file()) continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
        ++n;
    }
    if (n == 0) {
        std::fprintf(stderr, "no seed files in %s\n", argv[1]);
        return 1;
    }
    std::printf("replayed %d seed inputs\n", n);
    return 0;
}
