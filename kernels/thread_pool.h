// A persistent pool of compute threads for the kernels: threads are created once, and each
// parallel op is a run() whose shares (thread indices) the threads execute, the calling thread
// taking index 0. Waiting threads spin briefly (the next op usually follows within microseconds)
// and then sleep on a condition variable, so a pool never burns a core that another process
// needs. A thread descheduled by the OS does not hold an op up: parallel_for() hands out tasks
// dynamically from an atomic counter (parallel_for_contiguous() from one range per thread's
// share, the others taking over what is left from its end), and when the caller has finished
// its share it claims the shares of threads that have not started yet and runs them itself, so
// it waits only for threads that are actually working.
// Thread-safety: run()/parallel_for() are called by one owner thread at a time (the compute
// worker) and are not reentrant (a task must not call back into its own pool). stats() and
// reset_stats() are called by the owner between runs.
#pragma once

#include <atomic>
#include <cassert>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace hearth::kernels {

// The number of physical cores this process may run on (hyper-threads counted once); at least 1.
int default_thread_count();

class thread_pool {
public:
    // n_threads <= 0 means default_thread_count(). Spawns n_threads - 1 threads.
    explicit thread_pool(int n_threads = 0);
    ~thread_pool();
    thread_pool(const thread_pool &) = delete;
    thread_pool & operator=(const thread_pool &) = delete;

    int n_threads() const { return n_threads_; }

    // Calls fn(thread_index, n_threads) once for every thread_index in [0, n_threads), each on
    // some pool thread (index 0 on the caller; another index on its own thread, or on the caller
    // when that thread had not woken up by the time the caller finished). Calls run concurrently
    // on different threads but never two at once on one thread. Returns when all have returned.
    template <class F>
    void run(F && fn) {
        run_erased(job_fn{&fn, [](void * f, int ti, int nt) { (*static_cast<std::remove_reference_t<F> *>(f))(ti, nt); }});
    }

    // Calls fn(task_index, thread_index) for every task in [0, n_tasks), each exactly once, handed
    // out in increasing order to whichever thread is free. Which thread runs a task is not
    // deterministic; a task's result must not depend on it (beyond per-thread scratch).
    template <class F>
    void parallel_for(int64_t n_tasks, F && fn) {
        if (n_tasks <= 0) return;
        if (n_tasks == 1 || n_threads_ == 1) {
            for (int64_t i = 0; i < n_tasks; ++i) fn(i, 0);
            return;
        }
        next_task_.value.store(0, std::memory_order_relaxed);
        run([&](int ti, int) {
            for (;;) {
                const int64_t i = next_task_.value.fetch_add(1, std::memory_order_relaxed);
                if (i >= n_tasks) break;
                fn(i, ti);
            }
        });
    }

    // The same contract as parallel_for, but each thread first runs its own contiguous share of
    // the task range in increasing order, and only then takes what is left of the other shares,
    // from their ends. For streaming ops (matvec): each thread reads one long sequential run of
    // memory, which the hardware prefetchers follow across task boundaries (tasks handed out
    // round-robin make every thread's stream jump at each task and cost a third of decode
    // speed), and a thread that helps leaves the owner's stream alone.
    template <class F>
    void parallel_for_contiguous(int64_t n_tasks, F && fn) {
        parallel_for_shares([&](int s) { return n_tasks * s / n_threads_; }, fn);
    }

    // parallel_for_contiguous with shares of the caller's choice: share s is the tasks
    // [bound(s), bound(s + 1)), for s in [0, n_threads); bound is non-decreasing, bound(0) = 0,
    // and bound(n_threads) is the number of tasks (< 2^32). A caller that puts small tasks at the
    // end of each share makes the shares finish close together: helpers take those first.
    template <class Bound, class F>
    void parallel_for_shares(Bound && bound, F && fn) {
        const int nt = n_threads_;
        const int64_t n_tasks = bound(nt);
        assert(n_tasks < (int64_t{1} << 32) && "parallel_for_shares packs task indices in 32 bits");
        if (n_tasks <= 0) return;
        if (n_tasks == 1 || nt == 1) {
            for (int64_t i = 0; i < n_tasks; ++i) fn(i, 0);
            return;
        }
        for (int s = 0; s < nt; ++s) shares_[s].value.store(pack_range(bound(s), bound(s + 1)), std::memory_order_relaxed);
        run([&](int ti, int) {
            for (int64_t i; (i = take_task(ti, /*from_end=*/false)) >= 0;) fn(i, ti);
            for (int k = 1; k < nt; ++k) {
                const int s = (ti + k) % nt;
                for (int64_t i; (i = take_task(s, /*from_end=*/true)) >= 0;) fn(i, ti);
            }
        });
    }

    // Time accounting since construction or reset_stats(): wall time spent inside run() and the
    // time threads spent inside the job function. idle = 1 - busy / (wall * n_threads): the share
    // of the pool's thread-time lost to waking, waiting at the end and imbalance.
    struct stats {
        uint64_t n_runs = 0;
        double wall_s = 0;
        double busy_s = 0;     // summed over threads
        int n_threads = 1;
        double idle_fraction() const { return wall_s > 0 ? 1.0 - busy_s / (wall_s * n_threads) : 0.0; }
    };
    stats get_stats() const;
    void reset_stats();

    // How long a waiting thread spins before it sleeps (default 50 µs; 0 = sleep at once).
    void set_spin_ns(int64_t ns) { spin_ns_ = ns; }

private:
    struct job_fn {
        void * obj;
        void (*call)(void *, int, int);
    };
    struct alignas(64) padded_counter {
        std::atomic<int64_t> value{0};
    };
    struct alignas(64) padded_range {
        std::atomic<uint64_t> value{0};
    };
    struct alignas(64) thread_slot {
        std::atomic<uint64_t> busy_ns{0};
        // The last run generation whose share for this index was claimed, by the thread itself or
        // by the caller: whoever moves it from the previous generation to the current one runs it.
        std::atomic<uint32_t> claimed{0};
    };

    // A share's tasks not yet taken, [first, end), as one word: the owner takes from the front
    // and helpers from the end, both by compare-and-swap.
    static uint64_t pack_range(int64_t first, int64_t end) {
        return static_cast<uint64_t>(first) | static_cast<uint64_t>(end) << 32;
    }
    int64_t take_task(int share, bool from_end) {
        std::atomic<uint64_t> & range = shares_[share].value;
        uint64_t v = range.load(std::memory_order_relaxed);
        for (;;) {
            const auto first = static_cast<int64_t>(v & 0xffffffffu), end = static_cast<int64_t>(v >> 32);
            if (first >= end) return -1;
            const uint64_t next = from_end ? pack_range(first, end - 1) : pack_range(first + 1, end);
            if (range.compare_exchange_weak(v, next, std::memory_order_relaxed)) return from_end ? end - 1 : first;
        }
    }
    void run_erased(job_fn job);
    void worker_main(int index);
    void run_job_timed(int index);
    bool claim(int index, uint32_t generation);

    int n_threads_;
    int64_t spin_ns_ = 50'000;
    std::vector<std::thread> threads_;
    std::unique_ptr<thread_slot[]> slots_;
    padded_counter next_task_;
    std::unique_ptr<padded_range[]> shares_;   // parallel_for_shares: the tasks left in each share

    // The job being run; written by the owner before `generation_` is bumped.
    job_fn job_{};
    std::atomic<bool> stop_{false};

    alignas(64) std::atomic<uint32_t> generation_{0};
    std::atomic<int> n_sleeping_workers_{0};
    std::mutex wake_mutex_;
    std::condition_variable wake_cv_;

    alignas(64) std::atomic<int> n_pending_{0};
    std::atomic<bool> owner_sleeping_{false};
    std::mutex done_mutex_;
    std::condition_variable done_cv_;

    std::atomic<bool> in_run_{false};
    uint64_t n_runs_ = 0;
    uint64_t wall_ns_ = 0;
};

}  // namespace hearth::kernels
