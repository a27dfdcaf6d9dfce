// memory_bandwidth: the machine's memory read bandwidth, measured by summing a buffer far
// larger than the caches on the pool's threads. It is the ceiling of a matvec (decode reads
// every weight once per token), so benchmarks report their speed against it.
// Thread-safety: uses the pool (one owner at a time).
#pragma once

#include <cstddef>

#include "kernels/thread_pool.h"

namespace hearth::kernels {

// GB/s (1e9 bytes) of the fastest of `passes` streaming sums over `bytes` of memory.
double measure_read_bandwidth_gbs(thread_pool & pool, size_t bytes = size_t{1} << 30, int passes = 3);

}  // namespace hearth::kernels
