#include "daemon/engine/memory_limit.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

namespace hearth::daemon {
namespace {

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t i = 0; i <= s.size(); ++i)
        if (i == s.size() || s[i] == sep) {
            out.emplace_back(s.substr(start, i - start));
            start = i + 1;
        }
    return out;
}

std::vector<std::string> read_lines(const std::string & path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// A limit file holds a number of bytes, or "max" (cgroup v2: none). Anything else: none.
uint64_t read_limit_file(const std::string & path) {
    std::ifstream in(path);
    std::string text;
    if (!(in >> text) || text == "max") return 0;
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc{} && p == text.data() + text.size() ? v : 0;
}

// One cgroup hierarchy that holds the memory controller: where it is mounted, the part of the
// hierarchy the mount shows (its root), and this process's cgroup in it.
struct memory_hierarchy {
    bool v2 = false;
    std::string mount_point, mount_root, cgroup_path;
};

std::vector<memory_hierarchy> memory_hierarchies(const std::string & root) {
    // /proc/self/cgroup: "hierarchy-id:controllers:path"; v2 is "0::path".
    std::string v2_path, v1_path;
    bool have_v2 = false, have_v1 = false;
    for (const auto & line : read_lines(root + "/proc/self/cgroup")) {
        const auto f = split(line, ':');
        if (f.size() < 3) continue;
        std::string path = line.substr(f[0].size() + f[1].size() + 2);   // a path may hold ':'
        if (f[0] == "0" && f[1].empty()) {
            v2_path = path;
            have_v2 = true;
        } else {
            for (const auto & c : split(f[1], ','))
                if (c == "memory") {
                    v1_path = path;
                    have_v1 = true;
                }
        }
    }
    // /proc/self/mountinfo: "id parent maj:min root mount-point options ... - fstype source super-options".
    std::vector<memory_hierarchy> out;
    for (const auto & line : read_lines(root + "/proc/self/mountinfo")) {
        const size_t dash = line.find(" - ");
        if (dash == std::string::npos) continue;
        const auto pre = split(line.substr(0, dash), ' ');
        const auto post = split(line.substr(dash + 3), ' ');
        if (pre.size() < 5 || post.size() < 3) continue;
        memory_hierarchy h;
        h.mount_root = pre[3];
        h.mount_point = pre[4];
        if (post[0] == "cgroup2" && have_v2) {
            h.v2 = true;
            h.cgroup_path = v2_path;
        } else if (post[0] == "cgroup" && have_v1) {
            const auto opts = split(post[2], ',');
            if (std::find(opts.begin(), opts.end(), "memory") == opts.end()) continue;
            h.cgroup_path = v1_path;
        } else {
            continue;
        }
        out.push_back(std::move(h));
    }
    return out;
}

// The smallest limit on the way from the process's cgroup up to the top of the mount (a
// parent's limit binds its children too), as {bytes, file}.
std::pair<uint64_t, std::string> hierarchy_limit(const std::string & root, const memory_hierarchy & h) {
    // The mount shows the hierarchy from mount_root down (a container's view): the cgroup's
    // folder is its path below that. A path outside the view leaves only the mount's own files.
    std::string rel = h.cgroup_path;
    if (h.mount_root != "/") {
        if (rel.compare(0, h.mount_root.size(), h.mount_root) == 0) rel = rel.substr(h.mount_root.size());
        else rel.clear();
    }
    const std::string top = root + h.mount_point;
    const char * file = h.v2 ? "/memory.max" : "/memory.limit_in_bytes";
    std::pair<uint64_t, std::string> best{0, ""};
    for (;;) {
        while (!rel.empty() && rel.back() == '/') rel.pop_back();
        const std::string path = top + rel + file;
        const uint64_t v = read_limit_file(path);
        if (v > 0 && (best.first == 0 || v < best.first)) best = {v, path};
        if (rel.empty()) break;
        rel.resize(rel.rfind('/') == std::string::npos ? 0 : rel.rfind('/'));
    }
    return best;
}

uint64_t status_kib(const std::vector<std::string> & lines, std::string_view key) {
    for (const auto & line : lines) {
        if (line.compare(0, key.size(), key) != 0) continue;
        std::istringstream in(line.substr(key.size()));
        uint64_t kib = 0;
        if (in >> kib) return kib * 1024;
    }
    return 0;
}

}  // namespace

memory_limit find_memory_limit(const std::string & root_in, uint64_t physical_bytes, uint64_t rlimit_as_bytes) {
    std::string root = root_in;
    while (!root.empty() && root.back() == '/') root.pop_back();
    memory_limit best;
    auto consider = [&best](uint64_t bytes, memory_limit_kind kind, std::string source) {
        if (bytes == 0 || (best.bytes != 0 && bytes >= best.bytes)) return;
        best = {bytes, kind, std::move(source)};
    };
    consider(physical_bytes, memory_limit_kind::physical, "physical memory");
    for (const auto & h : memory_hierarchies(root)) {
        auto [bytes, path] = hierarchy_limit(root, h);
        consider(bytes, memory_limit_kind::cgroup,
                 std::string(h.v2 ? "cgroup v2 memory.max" : "cgroup v1 memory.limit_in_bytes") + " (" + path + ")");
    }
    if (rlimit_as_bytes != RLIM_INFINITY) consider(rlimit_as_bytes, memory_limit_kind::address_space, "RLIMIT_AS");
    return best;
}

memory_limit process_memory_limit() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    const uint64_t physical = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
    rlimit as{};
    const uint64_t rlimit_as = getrlimit(RLIMIT_AS, &as) == 0 ? static_cast<uint64_t>(as.rlim_cur) : RLIM_INFINITY;
    return find_memory_limit("/", physical, rlimit_as);
}

memory_use process_memory_use(uint64_t mapped_bytes) {
    const auto lines = read_lines("/proc/self/status");
    memory_use u;
    u.mapped_bytes = mapped_bytes;
    u.anon_bytes = status_kib(lines, "RssAnon:");
    u.virtual_bytes = status_kib(lines, "VmSize:");
    return u;
}

namespace {

// What must stay below the limit besides the KV cache: under RLIMIT_AS the whole address space
// (the mapping included); otherwise the resident process, with its weights or without them.
uint64_t need_bytes(const memory_limit & limit, const memory_use & use, bool with_weights) {
    if (limit.kind == memory_limit_kind::address_space)
        return use.virtual_bytes + std::min(k_address_space_headroom_bytes, limit.bytes / 2);
    return use.anon_bytes + (with_weights ? use.mapped_bytes : 0) + std::min(k_memory_headroom_bytes, limit.bytes / 8);
}

}  // namespace

uint64_t kv_room_bytes(const memory_limit & limit, const memory_use & use) {
    if (limit.bytes == 0) return UINT64_MAX;
    const uint64_t need = need_bytes(limit, use, false);
    return limit.bytes > need ? limit.bytes - need : 0;
}

uint64_t default_kv_budget(const memory_limit & limit, const memory_use & use, uint64_t min_slot_bytes) {
    if (limit.bytes == 0) return std::max(k_max_default_kv_budget, min_slot_bytes);   // nothing known: as before
    const uint64_t need = need_bytes(limit, use, true);
    const uint64_t room = kv_room_bytes(limit, use);   // the weights may page out: the hard wall
    uint64_t budget = 0;
    if (limit.bytes > need)
        budget = (limit.bytes - need) / (limit.kind == memory_limit_kind::physical ? 4 : 2);
    else
        budget = room / 4;
    budget = std::min(budget, k_max_default_kv_budget);
    if (budget < min_slot_bytes && room >= 2 * min_slot_bytes) budget = min_slot_bytes;
    return budget;
}

}  // namespace hearth::daemon
