#include "daemon/services/scheduler.h"

#include <algorithm>
#include <exception>

#include <spdlog/spdlog.h>

namespace hearth::daemon {

scheduler::scheduler(scheduler_limits limits) : limits_(limits) {
    worker_ = std::thread([this] { worker_loop(); });
}

scheduler::~scheduler() { stop(); }

result<scheduler::job_id> scheduler::submit(job j) {
    std::vector<entry> superseded;
    job_id id = 0;
    {
        std::lock_guard lock(mu_);
        if (stopping_) return fail("server is shutting down");
        if (!j.supersede_key.empty()) {
            bool stopped_running = false;
            const std::string & key = j.supersede_key;
            take_matching_locked([&key](const job & j) { return j.supersede_key == key; }, superseded,
                                 stopped_running);
            if (stopped_running) ++stats_.cancelled_running;
            stats_.superseded += superseded.size();
        }
        if (running_id_ != 0 && running_yields_ && j.priority < running_priority_ &&
            (j.continues.empty() || j.continues != running_key_) && !running_stop_.stop_requested()) {
            running_stop_.request_stop();
            ++stats_.preempted;
        }
        // The superseded entries have left the queue, so a burst of keystrokes on one
        // document never counts against the bound more than once.
        if (queue_.size() >= limits_.max_queued) {
            ++stats_.rejected;
            // Entries already taken out are still dropped below: they lost to this newer
            // job even though it was refused.
            id = 0;
        } else {
            id = next_id_++;
            entry e;
            e.id = id;
            e.ready_at = clock::now() + j.debounce;
            e.j = std::move(j);
            queue_.push_back(std::move(e));
            ++stats_.submitted;
        }
    }
    cv_.notify_all();
    for (auto & e : superseded)
        if (e.j.dropped) e.j.dropped(drop_reason::superseded);
    if (id == 0) return fail("server busy: ", limits_.max_queued, " requests are already queued");
    return id;
}

template <class Pred>
void scheduler::take_queued_locked(Pred pred, std::vector<entry> & out) {
    for (auto it = queue_.begin(); it != queue_.end();) {
        if (pred(it->j)) {
            out.push_back(std::move(*it));
            it = queue_.erase(it);
        } else {
            ++it;
        }
    }
}

template <class Pred>
void scheduler::take_matching_locked(Pred pred, std::vector<entry> & out, bool & stopped_running) {
    take_queued_locked(pred, out);
    stopped_running = false;
    if (running_id_ != 0) {
        job probe;
        probe.supersede_key = running_key_;
        probe.owner = running_owner_;
        if (pred(probe) && !running_stop_.stop_requested()) {
            running_stop_.request_stop();
            stopped_running = true;
        }
    }
}

bool scheduler::cancel(job_id id) {
    std::vector<entry> taken;
    {
        std::lock_guard lock(mu_);
        if (running_id_ == id) {
            if (!running_stop_.stop_requested()) {
                running_stop_.request_stop();
                ++stats_.cancelled_running;
            }
            return true;
        }
        auto it = std::find_if(queue_.begin(), queue_.end(), [id](const entry & e) { return e.id == id; });
        if (it == queue_.end()) return false;
        taken.push_back(std::move(*it));
        queue_.erase(it);
        ++stats_.cancelled_queued;
    }
    cv_.notify_all();
    if (taken.front().j.dropped) taken.front().j.dropped(drop_reason::cancelled);
    return true;
}

void scheduler::cancel_owner(uint64_t owner) {
    std::vector<entry> taken;
    {
        std::lock_guard lock(mu_);
        bool stopped_running = false;
        take_matching_locked([owner](const job & j) { return j.owner == owner; }, taken, stopped_running);
        if (stopped_running) ++stats_.cancelled_running;
        stats_.cancelled_queued += taken.size();
    }
    cv_.notify_all();
    for (auto & e : taken)
        if (e.j.dropped) e.j.dropped(drop_reason::cancelled);
}

void scheduler::cancel_key(const std::string & key) {
    if (key.empty()) return;
    std::vector<entry> taken;
    {
        std::lock_guard lock(mu_);
        bool stopped_running = false;
        take_matching_locked([&key](const job & j) { return j.supersede_key == key; }, taken, stopped_running);
        if (stopped_running) ++stats_.cancelled_running;
        stats_.cancelled_queued += taken.size();
    }
    cv_.notify_all();
    for (auto & e : taken)
        if (e.j.dropped) e.j.dropped(drop_reason::cancelled);
}

void scheduler::cancel_queued_key(const std::string & key) {
    if (key.empty()) return;
    std::vector<entry> taken;
    {
        std::lock_guard lock(mu_);
        take_queued_locked([&key](const job & j) { return j.supersede_key == key; }, taken);
        stats_.cancelled_queued += taken.size();
    }
    cv_.notify_all();
    for (auto & e : taken)
        if (e.j.dropped) e.j.dropped(drop_reason::cancelled);
}

void scheduler::stop() {
    std::deque<entry> taken;
    {
        std::lock_guard lock(mu_);
        if (stopping_ && !worker_.joinable()) return;
        stopping_ = true;
        taken.swap(queue_);
        if (running_id_ != 0) running_stop_.request_stop();
    }
    cv_.notify_all();
    for (auto & e : taken)
        if (e.j.dropped) e.j.dropped(drop_reason::shutdown);
    if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id()) worker_.join();
}

scheduler_stats scheduler::stats() const {
    std::lock_guard lock(mu_);
    scheduler_stats s = stats_;
    s.queued = queue_.size();
    s.running = running_id_ != 0;
    return s;
}

void scheduler::worker_loop() {
    std::unique_lock lock(mu_);
    for (;;) {
        if (stopping_) return;
        if (queue_.empty()) {
            cv_.wait(lock);
            continue;
        }
        // The best ready entry: lowest priority value, then earliest submission. If none is
        // ready yet, sleep until the earliest debounce deadline (or a new submission).
        const auto now = clock::now();
        auto best = queue_.end();
        auto earliest = clock::time_point::max();
        for (auto it = queue_.begin(); it != queue_.end(); ++it) {
            if (it->ready_at > now) {
                earliest = std::min(earliest, it->ready_at);
                continue;
            }
            if (best == queue_.end() || it->j.priority < best->j.priority) best = it;
        }
        if (best == queue_.end()) {
            cv_.wait_until(lock, earliest);
            continue;
        }
        entry e = std::move(*best);
        queue_.erase(best);
        running_id_ = e.id;
        running_key_ = e.j.supersede_key;
        running_owner_ = e.j.owner;
        running_priority_ = e.j.priority;
        running_yields_ = e.j.yields;
        running_stop_ = e.stop;
        stats_.last_queue_wait_ms = std::chrono::duration<double, std::milli>(now - e.ready_at).count();
        ++stats_.ran;
        lock.unlock();
        try {
            if (e.j.run) e.j.run(e.stop.get_token());
        } catch (const std::exception & ex) {
            // A job answers its own request; an exception here is a bug in the job, and it
            // must not take the worker (and with it every later request) down.
            spdlog::error("scheduler: job {} threw: {}", e.id, ex.what());
        } catch (...) {
            spdlog::error("scheduler: job {} threw a non-standard exception", e.id);
        }
        e.j = job{};  // release captured state (responders, buffers) outside the lock
        lock.lock();
        running_id_ = 0;
        running_key_.clear();
        running_owner_ = 0;
        running_yields_ = false;
        running_stop_ = std::stop_source(std::nostopstate);
    }
}

}  // namespace hearth::daemon
