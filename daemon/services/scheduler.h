// scheduler: the one compute worker thread and the bounded priority queue in front of it.
// Every model call (completion, chat, document release) runs as a job on this worker, so
// the model and its KV caches have exactly one owner and the I/O threads never compute.
//
// Ordering: among jobs whose debounce has passed, the highest priority runs first
// (inline completion before chat), FIFO within a priority. A job with a supersede key
// cancels every older job with the same key, queued or running ("newest keystroke wins").
// A completion job waits `debounce` after submission so a burst of keystrokes collapses
// into the last one; waiting uses the condition variable's deadline, never polling.
// A job that yields (a background warm-up) is stopped, running, as soon as a job of a higher
// priority is submitted: the worker is the user's the moment a request arrives, and what the
// warm-up computed so far stays in its KV slot. A request that continues a warm-up's work
// (the same window) names its key (`continues`) and waits for that one instead.
//
// Every submitted job ends exactly once: either run() is called on the worker (it sees its
// stop token requested if it was cancelled while running), or dropped() is called with the
// reason it never ran. Callbacks run outside the scheduler's lock.
//
// Thread-safety: all public functions may be called from any thread. run() executes on the
// worker; dropped() executes on the thread that caused the drop (submit, cancel, stop).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"

namespace hearth::daemon {

enum class job_priority : int { completion = 0, chat = 1, background = 2 };  // lower runs first

enum class drop_reason {
    cancelled,    // cancel(id) or cancel_owner() while queued
    superseded,   // a newer job with the same supersede key arrived
    shutdown,     // the scheduler stopped before the job ran
};

struct job {
    job_priority priority = job_priority::background;
    uint64_t owner = 0;                  // connection id, for cancel_owner()
    std::string supersede_key;           // empty: never superseded
    std::chrono::milliseconds debounce{0};
    bool yields = false;                 // stopped while running when a higher-priority job arrives
    std::string continues;               // a yielding job's supersede key: this job waits for that one
    std::function<void(std::stop_token)> run;
    std::function<void(drop_reason)> dropped;
};

struct scheduler_limits {
    size_t max_queued = 64;              // jobs waiting (not counting the running one)
};

struct scheduler_stats {
    uint64_t submitted = 0;
    uint64_t ran = 0;
    uint64_t cancelled_queued = 0;       // dropped while waiting
    uint64_t cancelled_running = 0;      // stop requested while running
    uint64_t superseded = 0;
    uint64_t preempted = 0;              // yielding jobs stopped for a higher-priority one
    uint64_t rejected = 0;               // queue full
    size_t queued = 0;
    bool running = false;
    double last_queue_wait_ms = 0;       // submission (after debounce) to start, last job
};

class scheduler {
public:
    using job_id = uint64_t;
    using clock = std::chrono::steady_clock;

    explicit scheduler(scheduler_limits limits = {});
    ~scheduler();  // stop()
    scheduler(const scheduler &) = delete;
    scheduler & operator=(const scheduler &) = delete;

    // Queues the job. An error (queue full, stopped) means the job is not taken and none
    // of its callbacks will be called; the caller answers "server busy".
    result<job_id> submit(job j);

    // Cancels one job: a queued job is dropped (dropped(cancelled)), a running one has its
    // stop token requested. Returns false if the job already finished or is unknown.
    bool cancel(job_id id);

    // Cancels every queued or running job of this owner (a connection that went away).
    void cancel_owner(uint64_t owner);
    // Cancels every queued or running job with this supersede key (its document changed).
    void cancel_key(const std::string & key);
    // Drops the queued jobs with this supersede key; a running one goes on.
    void cancel_queued_key(const std::string & key);

    // Drops all queued jobs (dropped(shutdown)), stops the running one and joins the worker.
    // Idempotent. After it, submit() fails.
    void stop();

    scheduler_stats stats() const;

private:
    struct entry {
        job_id id = 0;
        job j;
        clock::time_point ready_at;
        std::stop_source stop;
    };

    void worker_loop();
    // Removes matching queued entries (moved into `out`) and requests stop on a matching
    // running job. Called with mu_ held.
    template <class Pred>
    void take_matching_locked(Pred pred, std::vector<entry> & out, bool & stopped_running);
    // The queued half of it: the running job is left be. Called with mu_ held.
    template <class Pred>
    void take_queued_locked(Pred pred, std::vector<entry> & out);

    scheduler_limits limits_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<entry> queue_;               // in submission order
    job_id next_id_ = 1;
    job_id running_id_ = 0;                 // 0: none
    std::string running_key_;
    uint64_t running_owner_ = 0;
    job_priority running_priority_ = job_priority::background;
    bool running_yields_ = false;
    std::stop_source running_stop_;
    bool stopping_ = false;
    scheduler_stats stats_;
    std::thread worker_;                    // last: starts after the members above exist
};

}  // namespace hearth::daemon
