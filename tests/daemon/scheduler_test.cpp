#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "daemon/services/scheduler.h"

using namespace hearth::daemon;
using namespace std::chrono_literals;

namespace {

// Records what happened to each job, in order, from whatever thread reports it.
struct journal {
    std::mutex mu;
    std::vector<std::string> events;
    void add(std::string e) {
        std::lock_guard lock(mu);
        events.push_back(std::move(e));
    }
    std::vector<std::string> snapshot() {
        std::lock_guard lock(mu);
        return events;
    }
};

job recording_job(journal & log, std::string name, job_priority prio, std::chrono::milliseconds work = 0ms) {
    job j;
    j.priority = prio;
    j.run = [&log, name, work](std::stop_token stop) {
        const auto end = std::chrono::steady_clock::now() + work;
        while (std::chrono::steady_clock::now() < end && !stop.stop_requested()) std::this_thread::sleep_for(1ms);
        log.add("ran " + name + (stop.stop_requested() ? " (stopped)" : ""));
    };
    j.dropped = [&log, name](drop_reason r) {
        log.add("dropped " + name + (r == drop_reason::cancelled ? " cancelled" : r == drop_reason::superseded ? " superseded" : " shutdown"));
    };
    return j;
}

// A job that blocks the worker until released, so the queue behind it can be arranged.
struct gate {
    std::promise<void> started, release;
    job make() {
        job j;
        j.priority = job_priority::background;
        j.run = [this](std::stop_token) {
            started.set_value();
            release.get_future().wait();
        };
        return j;
    }
};

// Submits j and waits until the worker has begun it.
void submit_and_wait_started(scheduler & s, job j) {
    auto started = std::make_shared<std::promise<void>>();
    auto inner = std::move(j.run);
    j.run = [started, inner](std::stop_token stop) {
        started->set_value();
        inner(stop);
    };
    REQUIRE(s.submit(std::move(j)));
    started->get_future().wait();
}

void wait_for_events(journal & log, size_t n) {
    for (int i = 0; i < 2000 && log.snapshot().size() < n; ++i) std::this_thread::sleep_for(1ms);
}

}  // namespace

TEST_CASE("scheduler runs completions before chat, FIFO within a priority", "[daemon][scheduler]") {
    scheduler s;
    journal log;
    gate g;
    REQUIRE(s.submit(g.make()));
    g.started.get_future().wait();
    REQUIRE(s.submit(recording_job(log, "chat1", job_priority::chat)));
    REQUIRE(s.submit(recording_job(log, "bg", job_priority::background)));
    REQUIRE(s.submit(recording_job(log, "c1", job_priority::completion)));
    REQUIRE(s.submit(recording_job(log, "chat2", job_priority::chat)));
    REQUIRE(s.submit(recording_job(log, "c2", job_priority::completion)));
    g.release.set_value();
    wait_for_events(log, 5);
    CHECK(log.snapshot() == std::vector<std::string>{"ran c1", "ran c2", "ran chat1", "ran chat2", "ran bg"});
}

TEST_CASE("scheduler cancels a queued job and stops a running one", "[daemon][scheduler]") {
    scheduler s;
    journal log;
    auto running = s.submit(recording_job(log, "long", job_priority::chat, 5000ms));
    REQUIRE(running);
    for (int i = 0; i < 1000 && !s.stats().running; ++i) std::this_thread::sleep_for(1ms);
    auto queued = s.submit(recording_job(log, "queued", job_priority::chat));
    REQUIRE(queued);
    CHECK(s.cancel(*queued));
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(s.cancel(*running));
    wait_for_events(log, 2);
    CHECK(std::chrono::steady_clock::now() - t0 < 1000ms);  // stopped at its next check, not after 5 s
    CHECK(log.snapshot() == std::vector<std::string>{"dropped queued cancelled", "ran long (stopped)"});
    CHECK_FALSE(s.cancel(*running));  // finished: nothing left to cancel
    const auto st = s.stats();
    CHECK(st.cancelled_queued == 1);
    CHECK(st.cancelled_running == 1);
}

TEST_CASE("scheduler: the newest job with a supersede key wins", "[daemon][scheduler]") {
    scheduler s;
    journal log;
    SECTION("queued ones are dropped as superseded") {
        gate g;
        REQUIRE(s.submit(g.make()));
        g.started.get_future().wait();
        for (int i = 0; i < 3; ++i) {
            job j = recording_job(log, "k" + std::to_string(i), job_priority::completion);
            j.supersede_key = "file:///a.cpp";
            REQUIRE(s.submit(std::move(j)));
        }
        job other = recording_job(log, "other", job_priority::completion);
        other.supersede_key = "file:///b.cpp";
        REQUIRE(s.submit(std::move(other)));
        g.release.set_value();
        wait_for_events(log, 4);
        CHECK(log.snapshot() ==
              std::vector<std::string>{"dropped k0 superseded", "dropped k1 superseded", "ran k2", "ran other"});
        CHECK(s.stats().superseded == 2);
    }
    SECTION("a running one is stopped") {
        job first = recording_job(log, "first", job_priority::completion, 5000ms);
        first.supersede_key = "file:///a.cpp";
        REQUIRE(s.submit(std::move(first)));
        for (int i = 0; i < 1000 && !s.stats().running; ++i) std::this_thread::sleep_for(1ms);
        job second = recording_job(log, "second", job_priority::completion);
        second.supersede_key = "file:///a.cpp";
        REQUIRE(s.submit(std::move(second)));
        wait_for_events(log, 2);
        CHECK(log.snapshot() == std::vector<std::string>{"ran first (stopped)", "ran second"});
    }
}

TEST_CASE("scheduler debounce collapses a burst into its last job", "[daemon][scheduler]") {
    scheduler s;
    journal log;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) {
        job j = recording_job(log, "k" + std::to_string(i), job_priority::completion);
        j.supersede_key = "doc";
        j.debounce = 80ms;
        REQUIRE(s.submit(std::move(j)));
        std::this_thread::sleep_for(10ms);  // keystrokes faster than the debounce
    }
    wait_for_events(log, 5);
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    auto ev = log.snapshot();
    REQUIRE(ev.size() == 5);
    CHECK(ev.back() == "ran k4");
    for (int i = 0; i < 4; ++i) CHECK(ev[i] == "dropped k" + std::to_string(i) + " superseded");
    CHECK(elapsed >= 40ms + 80ms);  // the last keystroke waited its full debounce
}

TEST_CASE("scheduler: a debounced job does not hold back a ready one", "[daemon][scheduler]") {
    scheduler s;
    journal log;
    job slow = recording_job(log, "debounced", job_priority::completion);
    slow.debounce = 200ms;
    REQUIRE(s.submit(std::move(slow)));
    REQUIRE(s.submit(recording_job(log, "chat", job_priority::chat)));
    wait_for_events(log, 2);
    CHECK(log.snapshot() == std::vector<std::string>{"ran chat", "ran debounced"});
}

TEST_CASE("scheduler refuses work beyond its queue bound", "[daemon][scheduler]") {
    scheduler s(scheduler_limits{.max_queued = 3});
    journal log;
    gate g;
    REQUIRE(s.submit(g.make()));
    g.started.get_future().wait();
    for (int i = 0; i < 3; ++i) REQUIRE(s.submit(recording_job(log, "q" + std::to_string(i), job_priority::chat)));
    auto refused = s.submit(recording_job(log, "overflow", job_priority::chat));
    REQUIRE_FALSE(refused);
    CHECK(refused.message().find("server busy") != std::string::npos);
    CHECK(s.stats().rejected == 1);
    g.release.set_value();
    wait_for_events(log, 3);
    std::this_thread::sleep_for(20ms);
    CHECK(log.snapshot().size() == 3);  // the refused job never runs nor drops
}

TEST_CASE("scheduler cancel_owner ends only that owner's jobs", "[daemon][scheduler]") {
    scheduler s;
    journal log;
    job mine = recording_job(log, "mine-running", job_priority::chat, 5000ms);
    mine.owner = 7;
    REQUIRE(s.submit(std::move(mine)));
    for (int i = 0; i < 1000 && !s.stats().running; ++i) std::this_thread::sleep_for(1ms);
    job queued = recording_job(log, "mine-queued", job_priority::chat);
    queued.owner = 7;
    REQUIRE(s.submit(std::move(queued)));
    job theirs = recording_job(log, "theirs", job_priority::chat);
    theirs.owner = 8;
    REQUIRE(s.submit(std::move(theirs)));
    s.cancel_owner(7);
    wait_for_events(log, 3);
    CHECK(log.snapshot() == std::vector<std::string>{"dropped mine-queued cancelled", "ran mine-running (stopped)", "ran theirs"});
}

TEST_CASE("scheduler stop drops queued jobs and stops the running one; every job ends once", "[daemon][scheduler]") {
    journal log;
    {
        scheduler s;
        REQUIRE(s.submit(recording_job(log, "running", job_priority::chat, 5000ms)));
        for (int i = 0; i < 1000 && !s.stats().running; ++i) std::this_thread::sleep_for(1ms);
        REQUIRE(s.submit(recording_job(log, "a", job_priority::chat)));
        REQUIRE(s.submit(recording_job(log, "b", job_priority::completion)));
        s.stop();
        CHECK_FALSE(s.submit(recording_job(log, "late", job_priority::chat)));
        s.stop();  // idempotent
    }
    auto ev = log.snapshot();
    std::sort(ev.begin(), ev.end());
    CHECK(ev == std::vector<std::string>{"dropped a shutdown", "dropped b shutdown", "ran running (stopped)"});
}

TEST_CASE("scheduler survives a job that throws", "[daemon][scheduler]") {
    scheduler s;
    journal log;
    job bad;
    bad.run = [](std::stop_token) { throw std::runtime_error("boom"); };
    REQUIRE(s.submit(std::move(bad)));
    REQUIRE(s.submit(recording_job(log, "after", job_priority::chat)));
    wait_for_events(log, 1);
    CHECK(log.snapshot() == std::vector<std::string>{"ran after"});
}

// A warm-up works in batches, checking its stop token between them (as prefill does): a
// request arriving while it runs stops it within one batch and runs next; a job that does not
// yield (a prefetch) is left to finish, and a job of the same priority never preempts.
TEST_CASE("scheduler: a yielding background job is preempted by a request within one batch", "[daemon][scheduler]") {
    scheduler s;
    journal log;
    constexpr auto batch = 20ms;
    std::promise<void> started;
    std::atomic<int> batches_after_request{-1};
    job warm;
    warm.priority = job_priority::background;
    warm.yields = true;
    warm.run = [&](std::stop_token stop) {
        started.set_value();
        for (int i = 0; i < 500 && !stop.stop_requested(); ++i) {
            std::this_thread::sleep_for(batch);
            if (batches_after_request >= 0) ++batches_after_request;
        }
        log.add(stop.stop_requested() ? "warm stopped" : "warm finished");
    };
    REQUIRE(s.submit(std::move(warm)));
    started.get_future().wait();
    REQUIRE(s.submit(recording_job(log, "bg", job_priority::background)));   // same priority: no preemption
    std::this_thread::sleep_for(3 * batch);
    CHECK(log.snapshot().empty());
    const auto t0 = std::chrono::steady_clock::now();
    batches_after_request = 0;
    REQUIRE(s.submit(recording_job(log, "request", job_priority::completion)));
    wait_for_events(log, 3);
    const auto waited = std::chrono::steady_clock::now() - t0;
    CHECK(log.snapshot() == std::vector<std::string>{"warm stopped", "ran request", "ran bg"});
    CHECK(batches_after_request.load() <= 1);
    CHECK(waited < 20 * batch);   // not the warm-up's 10 s
    CHECK(s.stats().preempted == 1);

    // A background job that does not yield runs to its end.
    submit_and_wait_started(s, recording_job(log, "prefetch", job_priority::background, 6 * batch));
    REQUIRE(s.submit(recording_job(log, "request2", job_priority::completion)));
    wait_for_events(log, 5);
    const auto ev = log.snapshot();
    REQUIRE(ev.size() == 5);
    CHECK(ev[3] == "ran prefetch");
    CHECK(ev[4] == "ran request2");
    CHECK(s.stats().preempted == 1);
}

TEST_CASE("scheduler: a request that continues a warm-up's work waits for it instead of stopping it", "[daemon][scheduler]") {
    scheduler s;
    journal log;
    job warm = recording_job(log, "warm", job_priority::background, 60ms);
    warm.yields = true;
    warm.supersede_key = "warm-up 1";
    submit_and_wait_started(s, std::move(warm));
    job request = recording_job(log, "request", job_priority::completion);
    request.continues = "warm-up 1";
    REQUIRE(s.submit(std::move(request)));
    wait_for_events(log, 2);
    CHECK(log.snapshot() == std::vector<std::string>{"ran warm", "ran request"});
    CHECK(s.stats().preempted == 0);
}

TEST_CASE("scheduler: cancel_queued_key drops what waits and leaves the running job be", "[daemon][scheduler]") {
    scheduler s;
    journal log;
    job running = recording_job(log, "running", job_priority::background, 50ms);
    running.supersede_key = "k";
    submit_and_wait_started(s, std::move(running));
    job queued = recording_job(log, "queued", job_priority::background);
    queued.supersede_key = "other";
    queued.debounce = 10s;
    REQUIRE(s.submit(std::move(queued)));
    s.cancel_queued_key("k");       // nothing of that key waits: the running one goes on
    s.cancel_queued_key("other");
    wait_for_events(log, 2);
    CHECK(log.snapshot() == std::vector<std::string>{"dropped queued cancelled", "ran running"});
}
