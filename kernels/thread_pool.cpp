#include "kernels/thread_pool.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <fstream>
#include <set>
#include <string>

#if defined(__linux__)
#include <sched.h>
#elif defined(__APPLE__)
#include <sys/sysctl.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace hearth::kernels {
namespace {

uint64_t now_ns() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch()).count());
}

// A hint to the core that we are spinning (lets the sibling hyper-thread run, saves power).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Spins until pred() holds or spin_ns has passed; returns pred()'s last value.
template <class Pred>
bool spin_until(Pred pred, int64_t spin_ns) {
    if (pred()) return true;
    if (spin_ns <= 0) return false;
    const uint64_t deadline = now_ns() + static_cast<uint64_t>(spin_ns);
    for (;;) {
        for (int i = 0; i < 32; ++i) {   // read the clock only every 32 polls
            cpu_relax();
            if (pred()) return true;
        }
        if (now_ns() >= deadline) return pred();
    }
}

#if defined(__linux__)
// Counts distinct physical cores among the CPUs this process may run on, from sysfs topology.
int linux_physical_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
    std::set<std::string> cores;
    int n_cpus = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &set)) continue;
        ++n_cpus;
        const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
        std::ifstream siblings(base + "thread_siblings_list");
        std::string line;
        if (!std::getline(siblings, line)) return n_cpus > 0 ? CPU_COUNT(&set) : 0;   // no topology: count CPUs
        cores.insert(line);
    }
    return static_cast<int>(cores.size());
}
#endif

}  // namespace

int default_thread_count() {
    int n = 0;
#if defined(__linux__)
    n = linux_physical_cores();
#elif defined(__APPLE__)
    // Performance cores only: efficiency cores slow a barrier-synchronised pool down.
    int32_t v = 0;
    size_t len = sizeof(v);
    if (sysctlbyname("hw.perflevel0.physicalcpu", &v, &len, nullptr, 0) == 0 ||
        sysctlbyname("hw.physicalcpu", &v, &len, nullptr, 0) == 0)
        n = v;
#endif
    if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(n, 1);
}

thread_pool::thread_pool(int n_threads)
    : n_threads_(n_threads > 0 ? n_threads : default_thread_count()),
      slots_(new thread_slot[static_cast<size_t>(n_threads_)]),
      shares_(new padded_range[static_cast<size_t>(n_threads_)]) {
    threads_.reserve(static_cast<size_t>(n_threads_ - 1));
    for (int i = 1; i < n_threads_; ++i) threads_.emplace_back([this, i] { worker_main(i); });
}

thread_pool::~thread_pool() {
    stop_.store(true);
    {
        std::lock_guard lock(wake_mutex_);
        generation_.fetch_add(1);
    }
    wake_cv_.notify_all();
    for (auto & t : threads_) t.join();
}

void thread_pool::run_job_timed(int index) {
    const uint64_t t0 = now_ns();
    job_.call(job_.obj, index, n_threads_);
    slots_[index].busy_ns.fetch_add(now_ns() - t0, std::memory_order_relaxed);
}

// Every run claims every share, so a slot holds the previous generation until someone claims it
// for this one. Only that exact step succeeds: a thread that read an old generation before being
// descheduled must not claim backwards a share of a run that has long finished.
bool thread_pool::claim(int index, uint32_t generation) {
    uint32_t expected = generation - 1;
    return slots_[index].claimed.compare_exchange_strong(expected, generation);
}

void thread_pool::run_erased(job_fn job) {
    [[maybe_unused]] const bool was_running = in_run_.exchange(true, std::memory_order_relaxed);
    assert(!was_running && "thread_pool::run is not reentrant and has one caller at a time");
    const uint64_t t0 = now_ns();
    job_ = job;
    uint32_t generation = 0;
    if (n_threads_ > 1) {
        n_pending_.store(n_threads_ - 1, std::memory_order_relaxed);
        // seq_cst store then load pairs with the worker's seq_cst increment then load
        // (in worker_main): either we see a sleeper and wake it, or it sees the new generation.
        generation = generation_.fetch_add(1) + 1;
        if (n_sleeping_workers_.load() > 0) {
            { std::lock_guard lock(wake_mutex_); }
            wake_cv_.notify_all();
        }
    }
    run_job_timed(0);
    if (n_threads_ > 1) {
        // Shares of threads that have not started (asleep, or descheduled): ours now.
        for (int i = 1; i < n_threads_; ++i) {
            if (!claim(i, generation)) continue;
            run_job_timed(i);
            n_pending_.fetch_sub(1);
        }
        auto done = [this] { return n_pending_.load() == 0; };   // seq_cst: pairs with owner_sleeping_
        if (!spin_until(done, spin_ns_)) {
            std::unique_lock lock(done_mutex_);
            owner_sleeping_.store(true);
            done_cv_.wait(lock, done);
            owner_sleeping_.store(false, std::memory_order_relaxed);
        }
    }
    ++n_runs_;
    wall_ns_ += now_ns() - t0;
    in_run_.store(false, std::memory_order_relaxed);
}

void thread_pool::worker_main(int index) {
    uint32_t seen = 0;   // the generation at construction: a run may already have started
    for (;;) {
        auto changed = [&] { return generation_.load() != seen; };   // seq_cst: pairs with n_sleeping_workers_
        if (!spin_until(changed, spin_ns_)) {
            std::unique_lock lock(wake_mutex_);
            n_sleeping_workers_.fetch_add(1);
            wake_cv_.wait(lock, changed);
            n_sleeping_workers_.fetch_sub(1);
        }
        seen = generation_.load();
        if (stop_.load()) return;
        // The caller may have run our share already; then `seen` is done or finishing without us.
        if (!claim(index, seen)) continue;
        run_job_timed(index);
        if (n_pending_.fetch_sub(1) == 1 && owner_sleeping_.load()) {
            { std::lock_guard lock(done_mutex_); }
            done_cv_.notify_one();
        }
    }
}

thread_pool::stats thread_pool::get_stats() const {
    stats s;
    s.n_runs = n_runs_;
    s.wall_s = static_cast<double>(wall_ns_) * 1e-9;
    s.n_threads = n_threads_;
    uint64_t busy = 0;
    for (int i = 0; i < n_threads_; ++i) busy += slots_[i].busy_ns.load(std::memory_order_relaxed);
    s.busy_s = static_cast<double>(busy) * 1e-9;
    return s;
}

void thread_pool::reset_stats() {
    n_runs_ = 0;
    wall_ns_ = 0;
    for (int i = 0; i < n_threads_; ++i) slots_[i].busy_ns.store(0, std::memory_order_relaxed);
}

}  // namespace hearth::kernels
