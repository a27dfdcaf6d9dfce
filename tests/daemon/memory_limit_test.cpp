#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "daemon/engine/memory_limit.h"

using namespace hearth::daemon;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t MiB = 1ull << 20, GiB = 1ull << 30;

// A fake root: proc/self/{cgroup,mountinfo} and cgroup files, removed at the end.
struct fake_root {
    fs::path dir;
    fake_root() {
        dir = fs::temp_directory_path() / ("hearth-memlimit-" + std::to_string(::getpid()) + "-" +
                                           std::to_string(reinterpret_cast<uintptr_t>(this)));
        fs::create_directories(dir / "proc/self");
    }
    ~fake_root() { fs::remove_all(dir); }
    void write(const std::string & rel, const std::string & text) const {
        fs::create_directories((dir / rel).parent_path());
        std::ofstream(dir / rel) << text;
    }
    std::string path() const { return dir.string(); }
};

const char * v2_mountinfo = "25 1 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
                            "26 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n";
const char * v1_mountinfo = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
                            "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
                            "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
                            "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

}  // namespace

TEST_CASE("memory limit: cgroup v2 memory.max of the process's cgroup", "[daemon][memory]") {
    fake_root r;
    r.write("proc/self/cgroup", "0::/user.slice/hearth.service\n");
    r.write("proc/self/mountinfo", v2_mountinfo);
    r.write("sys/fs/cgroup/user.slice/hearth.service/memory.max", "209715200\n");
    r.write("sys/fs/cgroup/user.slice/memory.max", "max\n");
    const auto l = find_memory_limit(r.path(), 16 * GiB, RLIM_INFINITY);
    CHECK(l.bytes == 200 * MiB);
    CHECK(l.kind == memory_limit_kind::cgroup);
    CHECK(l.source == "cgroup v2 memory.max (" + r.path() + "/sys/fs/cgroup/user.slice/hearth.service/memory.max)");
}

TEST_CASE("memory limit: a parent cgroup's smaller limit binds", "[daemon][memory]") {
    fake_root r;
    r.write("proc/self/cgroup", "0::/a/b/c\n");
    r.write("proc/self/mountinfo", v2_mountinfo);
    r.write("sys/fs/cgroup/a/b/c/memory.max", "max\n");
    r.write("sys/fs/cgroup/a/b/memory.max", "1073741824\n");
    r.write("sys/fs/cgroup/a/memory.max", "2147483648\n");
    const auto l = find_memory_limit(r.path(), 16 * GiB, RLIM_INFINITY);
    CHECK(l.bytes == 1 * GiB);
    CHECK(l.source.find("/a/b/memory.max") != std::string::npos);
}

TEST_CASE("memory limit: cgroup v1 memory.limit_in_bytes, 'unlimited' ignored", "[daemon][memory]") {
    fake_root r;
    r.write("proc/self/cgroup", "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n");
    r.write("proc/self/mountinfo", v1_mountinfo);
    r.write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    r.write("sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes", "314572800\n");
    r.write("sys/fs/cgroup/cpu/process_api/abc/memory.limit_in_bytes", "1000\n");   // not the memory controller
    const auto l = find_memory_limit(r.path(), 24 * GiB, RLIM_INFINITY);
    CHECK(l.bytes == 300 * MiB);
    CHECK(l.kind == memory_limit_kind::cgroup);
    CHECK(l.source.rfind("cgroup v1 memory.limit_in_bytes (", 0) == 0);
}

TEST_CASE("memory limit: a container's mount shows its cgroup as the root", "[daemon][memory]") {
    fake_root r;
    // Without a cgroup namespace the path names the host's cgroup; the mount's root is that cgroup.
    r.write("proc/self/cgroup", "0::/docker/f00d\n");
    r.write("proc/self/mountinfo", "25 1 0:23 /docker/f00d /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n");
    r.write("sys/fs/cgroup/memory.max", "536870912\n");
    CHECK(find_memory_limit(r.path(), 16 * GiB, RLIM_INFINITY).bytes == 512 * MiB);
}

TEST_CASE("memory limit: the smallest of RAM, cgroup and RLIMIT_AS", "[daemon][memory]") {
    fake_root r;
    r.write("proc/self/cgroup", "0::/x\n");
    r.write("proc/self/mountinfo", v2_mountinfo);
    r.write("sys/fs/cgroup/x/memory.max", "4294967296\n");
    auto l = find_memory_limit(r.path(), 16 * GiB, 3 * GiB);
    CHECK(l.bytes == 3 * GiB);
    CHECK(l.kind == memory_limit_kind::address_space);
    CHECK(l.source == "RLIMIT_AS");
    l = find_memory_limit(r.path(), 2 * GiB, RLIM_INFINITY);
    CHECK(l.bytes == 2 * GiB);
    CHECK(l.kind == memory_limit_kind::physical);
    // No cgroup files at all (no /proc): physical memory.
    fake_root empty;
    CHECK(find_memory_limit(empty.path(), 8 * GiB, RLIM_INFINITY).source == "physical memory");
    // Garbage in a limit file is no limit, not a crash.
    r.write("sys/fs/cgroup/x/memory.max", "lots\n");
    CHECK(find_memory_limit(r.path(), 16 * GiB, RLIM_INFINITY).bytes == 16 * GiB);
}

TEST_CASE("default KV budget: below the limit, after the model and the process", "[daemon][memory]") {
    const memory_use use{400 * MiB, 100 * MiB, 1200 * MiB};   // mapped, anon, virtual
    const uint64_t slot = 48 * MiB;
    // A big machine: a quarter of what is left, at most 1 GiB.
    CHECK(default_kv_budget({24 * GiB, memory_limit_kind::physical, ""}, use, slot) == k_max_default_kv_budget);
    // A 1 GiB cgroup: half of 1024 - 400 - 100 - 64 MiB.
    const uint64_t b = default_kv_budget({1 * GiB, memory_limit_kind::cgroup, ""}, use, slot);
    CHECK(b == (1 * GiB - 564 * MiB) / 2);
    // A 200 MiB cgroup, smaller than the model: a quarter of what the rest of the process
    // leaves (with a headroom of an eighth of the limit, 25 MiB).
    const uint64_t small = default_kv_budget({200 * MiB, memory_limit_kind::cgroup, ""}, use, slot);
    CHECK(small == (200 * MiB - 125 * MiB) / 4);
    CHECK(small < 200 * MiB - use.anon_bytes);
    // RLIMIT_AS counts the address space: 2 GiB - 1200 MiB - the headroom, halved.
    CHECK(default_kv_budget({2 * GiB, memory_limit_kind::address_space, ""}, use, slot) ==
          (2 * GiB - 1200 * MiB - k_address_space_headroom_bytes) / 2);
    // Nothing left: 0 (requests are refused with a message), never a budget past the limit.
    CHECK(default_kv_budget({1000 * MiB, memory_limit_kind::address_space, ""}, use, slot) == 0);
    // One full-context slot at least, where the limit has room for two.
    CHECK(default_kv_budget({600 * MiB, memory_limit_kind::cgroup, ""}, use, slot) == slot);
    CHECK(kv_room_bytes({700 * MiB, memory_limit_kind::cgroup, ""}, use) == 700 * MiB - 164 * MiB);
}
