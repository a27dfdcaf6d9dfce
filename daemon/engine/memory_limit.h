// memory_limit: how much memory this process may use before it is refused or killed, and
// the KV budget that leaves room for the model and the rest of the process under it.
// The limit is the smallest of physical RAM, the memory limit of the process's cgroup and of
// every cgroup above it (v2 memory.max, v1 memory.limit_in_bytes; found through
// /proc/self/cgroup and /proc/self/mountinfo), and RLIMIT_AS. Under a cgroup limit the
// kernel kills the process that passes it; under RLIMIT_AS an allocation fails. Either way
// the KV cache, the one part of the daemon that grows with use, must stay well below it.
// Thread-safety: pure functions of the files they read; call at start-up.
#pragma once

#include <cstdint>
#include <string>

namespace hearth::daemon {

enum class memory_limit_kind {
    physical,        // the machine's RAM, shared with everything else on it
    cgroup,          // resident memory of the cgroup (page cache of the mapped model included)
    address_space,   // RLIMIT_AS: virtual size, every mapping and reservation counted
};

struct memory_limit {
    uint64_t bytes = 0;                              // 0: nothing is known
    memory_limit_kind kind = memory_limit_kind::physical;
    std::string source;                              // where it was read, for status and logs
};

// The smallest limit that applies. `root` prefixes every path read ("/" for this process; a
// test passes a folder with fake proc/self/{cgroup,mountinfo} and cgroup files); physical_bytes
// and rlimit_as_bytes are passed in (0 or RLIM_INFINITY: none).
memory_limit find_memory_limit(const std::string & root, uint64_t physical_bytes, uint64_t rlimit_as_bytes);
// This process's limit.
memory_limit process_memory_limit();

// What the process holds when the budget is derived (after the model is loaded).
struct memory_use {
    uint64_t mapped_bytes = 0;    // the model file's mapping, to be kept resident
    uint64_t anon_bytes = 0;      // heap, stacks, scratch buffers (RssAnon)
    uint64_t virtual_bytes = 0;   // the whole address space (VmSize)
};
// Of this process, from /proc/self/status (zeros where it cannot be read).
memory_use process_memory_use(uint64_t mapped_bytes);

// Room kept free of KV slots for what else the process allocates while serving (requests,
// documents, tokenization, connection buffers; under RLIMIT_AS also thread stacks and
// allocator arenas, which reserve address space): these, or an eighth (RLIMIT_AS: half)
// of a smaller limit.
inline constexpr uint64_t k_memory_headroom_bytes = 64ull << 20;
inline constexpr uint64_t k_address_space_headroom_bytes = 256ull << 20;
inline constexpr uint64_t k_max_default_kv_budget = 1ull << 30;

// How much the KV cache could take before the process reaches the limit (the weights may page
// out of a cgroup's memory; under RLIMIT_AS they count). UINT64_MAX when no limit is known.
uint64_t kv_room_bytes(const memory_limit & limit, const memory_use & use);

// The default KV budget: of what the limit leaves after the process and its model, a quarter
// of physical RAM (other programs share it) or half of a process limit, at most 1 GiB. At
// least min_slot_bytes (one full-context slot) where the limit leaves room for two; when the
// limit cannot even hold the model resident, a quarter of what is left beside the rest of the
// process (the weights page in from the file; the KV cache must never be what gets the
// process killed). 0 when the limit leaves nothing: every request is then refused, clearly.
uint64_t default_kv_budget(const memory_limit & limit, const memory_use & use, uint64_t min_slot_bytes);

}  // namespace hearth::daemon
