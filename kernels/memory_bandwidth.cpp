#include "kernels/memory_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace hearth::kernels {

double measure_read_bandwidth_gbs(thread_pool & pool, size_t bytes, int passes) {
    const size_t n_words = std::max<size_t>(bytes / 8, 1);
    std::unique_ptr<uint64_t[]> data(new uint64_t[n_words]);
    for (size_t i = 0; i < n_words; ++i) data[i] = i;  // touch every page before timing
    constexpr size_t k_chunk_words = (size_t{4} << 20) / 8;
    const auto n_chunks = static_cast<int64_t>((n_words + k_chunk_words - 1) / k_chunk_words);
    std::vector<uint64_t> partial(static_cast<size_t>(pool.n_threads()) * 8, 0);  // 64 bytes apart
    double best = 0;
    for (int pass = 0; pass < std::max(passes, 1); ++pass) {
        const auto t0 = std::chrono::steady_clock::now();
        pool.parallel_for(n_chunks, [&](int64_t c, int ti) {
            const uint64_t * p = data.get() + static_cast<size_t>(c) * k_chunk_words;
            const size_t n = std::min(k_chunk_words, n_words - static_cast<size_t>(c) * k_chunk_words);
            uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
            size_t i = 0;
            for (; i + 4 <= n; i += 4) {
                a0 += p[i];
                a1 += p[i + 1];
                a2 += p[i + 2];
                a3 += p[i + 3];
            }
            for (; i < n; ++i) a0 += p[i];
            partial[static_cast<size_t>(ti) * 8] += a0 + a1 + a2 + a3;
        });
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::max(best, static_cast<double>(n_words * 8) / s * 1e-9);
    }
    // The sums feed an atomic so the compiler cannot drop the loads.
    std::atomic<uint64_t> sink{0};
    for (uint64_t v : partial) sink.fetch_add(v, std::memory_order_relaxed);
    return best;
}

}  // namespace hearth::kernels
