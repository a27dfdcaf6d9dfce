#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/thread_pool.h"

using hearth::kernels::thread_pool;

TEST_CASE("default_thread_count is at least one and at most the logical CPUs", "[kernels][thread_pool]") {
    const int n = hearth::kernels::default_thread_count();
    CHECK(n >= 1);
    const unsigned hw = std::thread::hardware_concurrency();
    if (hw > 0) CHECK(n <= static_cast<int>(hw));
}

TEST_CASE("thread_pool::run calls every thread index exactly once per run", "[kernels][thread_pool]") {
    const int n_threads = GENERATE(1, 2, 3, 5);
    thread_pool pool(n_threads);
    REQUIRE(pool.n_threads() == n_threads);
    std::vector<std::atomic<int>> calls(static_cast<size_t>(n_threads));
    std::atomic<int> wrong_count{0};   // Catch2 assertions are not thread-safe: check afterwards
    const int n_runs = 2000;   // many back-to-back runs exercise the wake/finish handshake
    for (int r = 0; r < n_runs; ++r) {
        pool.run([&](int ti, int nt) {
            if (nt != n_threads) wrong_count.fetch_add(1);
            calls[static_cast<size_t>(ti)].fetch_add(1);
        });
    }
    CHECK(wrong_count.load() == 0);
    for (auto & c : calls) CHECK(c.load() == n_runs);
}

TEST_CASE("thread_pool: the calling thread runs index 0, the others run concurrently on their own threads",
          "[kernels][thread_pool]") {
    thread_pool pool(2);
    const auto caller = std::this_thread::get_id();
    std::thread::id seen0, seen1;
    std::atomic<bool> one_started{false};
    pool.run([&](int ti, int) {
        if (ti == 0) {
            seen0 = std::this_thread::get_id();
            // Share 1 can only start while we wait here if it runs on another thread.
            while (!one_started.load()) std::this_thread::yield();
        } else {
            seen1 = std::this_thread::get_id();
            one_started = true;
        }
    });
    CHECK(seen0 == caller);
    CHECK(seen1 != caller);
}

TEST_CASE("thread_pool: each share runs exactly once while the caller races sleeping threads for them",
          "[kernels][thread_pool]") {
    // With no spinning, every run wakes sleeping threads, and the caller (whose own share is
    // empty) tries to claim their shares at the same moment: both sides must agree on who runs it.
    thread_pool pool(3);
    pool.set_spin_ns(0);
    std::vector<int> calls(3, 0);
    std::atomic<int> concurrent{0};
    std::atomic<int> max_concurrent{0};
    for (int r = 0; r < 2000; ++r) {
        pool.run([&](int ti, int) {
            const int now = concurrent.fetch_add(1) + 1;
            int prev = max_concurrent.load();
            while (now > prev && !max_concurrent.compare_exchange_weak(prev, now)) {}
            ++calls[static_cast<size_t>(ti)];   // one writer per index at a time
            concurrent.fetch_sub(1);
        });
        REQUIRE(concurrent.load() == 0);        // run() returned only after every share ended
    }
    CHECK(calls == std::vector<int>{2000, 2000, 2000});
    CHECK(max_concurrent.load() <= 3);
}

TEST_CASE("thread_pool::parallel_for runs each task exactly once", "[kernels][thread_pool]") {
    const int n_threads = GENERATE(1, 2, 4);
    const int64_t n_tasks = GENERATE(0, 1, 2, 3, 17, 1000);
    thread_pool pool(n_threads);
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n_tasks));
    std::atomic<int> bad_index{0};
    for (int rep = 0; rep < 20; ++rep) {
        pool.parallel_for(n_tasks, [&](int64_t i, int ti) {
            if (ti < 0 || ti >= n_threads) bad_index.fetch_add(1);
            hits[static_cast<size_t>(i)].fetch_add(1);
        });
    }
    CHECK(bad_index.load() == 0);
    for (auto & h : hits) CHECK(h.load() == 20);
}

TEST_CASE("thread_pool::parallel_for_contiguous runs each task exactly once", "[kernels][thread_pool]") {
    const int n_threads = GENERATE(1, 2, 3, 4);
    const int64_t n_tasks = GENERATE(0, 1, 2, 3, 17, 1000);
    thread_pool pool(n_threads);
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n_tasks));
    std::atomic<int> bad_index{0};
    for (int rep = 0; rep < 20; ++rep) {
        pool.parallel_for_contiguous(n_tasks, [&](int64_t i, int ti) {
            if (ti < 0 || ti >= n_threads) bad_index.fetch_add(1);
            hits[static_cast<size_t>(i)].fetch_add(1);
        });
    }
    CHECK(bad_index.load() == 0);
    for (auto & h : hits) CHECK(h.load() == 20);
}

TEST_CASE("thread_pool::parallel_for_contiguous: each thread starts on its own share, in order, and helps from the end",
          "[kernels][thread_pool]") {
    thread_pool pool(2);
    std::vector<std::vector<int64_t>> order(2);
    std::atomic<bool> one_done{false};
    pool.parallel_for_contiguous(100, [&](int64_t i, int ti) {
        // Thread 0 waits at its first task until thread 1 has drained its share (50..99) and
        // moved on, so both shares are seen from both sides.
        if (i == 0)
            while (!one_done.load()) std::this_thread::yield();
        if (ti == 1 && i == 99) one_done = true;
        order[static_cast<size_t>(ti)].push_back(i);
    });
    REQUIRE(order[1].size() > 50);   // thread 1 took part of thread 0's share
    CHECK(order[0].front() == 0);
    for (size_t k = 0; k < 50; ++k) CHECK(order[1][k] == 50 + static_cast<int64_t>(k));
    // Its help came from the end of share 0, backwards; thread 0 went forwards from its start,
    // and the two met without a gap or an overlap.
    for (size_t k = 50; k < order[1].size(); ++k) CHECK(order[1][k] == 49 - static_cast<int64_t>(k - 50));
    for (size_t k = 0; k < order[0].size(); ++k) CHECK(order[0][k] == static_cast<int64_t>(k));
    CHECK(order[0].size() + order[1].size() == 100);
}

TEST_CASE("thread_pool::parallel_for_shares runs each task once, each share from its own start", "[kernels][thread_pool]") {
    const int n_threads = GENERATE(1, 2, 3);
    thread_pool pool(n_threads);
    // Uneven shares, one of them empty: [0, 7), [7, 7), [7, 40) for three threads.
    const std::vector<int64_t> bounds = n_threads == 3 ? std::vector<int64_t>{0, 7, 7, 40}
                                        : n_threads == 2 ? std::vector<int64_t>{0, 3, 40}
                                                         : std::vector<int64_t>{0, 40};
    for (int rep = 0; rep < 50; ++rep) {
        std::vector<std::atomic<int>> hits(40);
        std::vector<std::vector<int64_t>> order(static_cast<size_t>(n_threads));
        std::mutex m;
        pool.parallel_for_shares([&](int s) { return bounds[static_cast<size_t>(s)]; }, [&](int64_t i, int ti) {
            hits[static_cast<size_t>(i)].fetch_add(1);
            std::lock_guard lock(m);
            order[static_cast<size_t>(ti)].push_back(i);
        });
        for (auto & h : hits) REQUIRE(h.load() == 1);
        // Whoever ran share s's index first ran the share's first task (the caller may run a
        // share whose thread had not started, under that share's index).
        for (int s = 0; s < n_threads; ++s)
            if (bounds[s] < bounds[s + 1] && !order[static_cast<size_t>(s)].empty())
                CHECK(order[static_cast<size_t>(s)].front() == bounds[static_cast<size_t>(s)]);
    }
}

TEST_CASE("thread_pool: results written by workers are visible to the caller after run", "[kernels][thread_pool]") {
    thread_pool pool(2);
    std::vector<int64_t> out(4096);
    for (int rep = 0; rep < 200; ++rep) {
        pool.parallel_for(64, [&](int64_t task, int) {
            for (int64_t i = task * 64; i < (task + 1) * 64; ++i) out[static_cast<size_t>(i)] = i * rep;
        });
        int64_t sum = std::accumulate(out.begin(), out.end(), int64_t{0});
        REQUIRE(sum == int64_t{rep} * 4096 * 4095 / 2);
    }
}

TEST_CASE("thread_pool: sleeping workers wake up for the next run", "[kernels][thread_pool]") {
    thread_pool pool(3);
    pool.set_spin_ns(0);   // sleep at once, so every run goes through the condition variable
    std::atomic<int> total{0};
    for (int r = 0; r < 300; ++r) {
        pool.run([&](int, int) { total.fetch_add(1); });
        if (r % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    CHECK(total.load() == 900);
}

TEST_CASE("thread_pool: dynamic tasks let the other threads take over a slow thread's share", "[kernels][thread_pool]") {
    thread_pool pool(2);
    std::vector<int> by_thread(2, 0);
    std::atomic<bool> slow_started{false};
    pool.parallel_for(200, [&](int64_t i, int ti) {
        if (i == 0) {   // the first task stalls as if its thread had been descheduled
            slow_started = true;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ++by_thread[static_cast<size_t>(ti)];
    });
    CHECK(by_thread[0] + by_thread[1] == 200);
    CHECK(std::max(by_thread[0], by_thread[1]) >= 190);   // the stalled thread ran (almost) only its one task
}

TEST_CASE("thread_pool::stats: busy time is counted and the idle fraction lies in [0, 1]", "[kernels][thread_pool]") {
    thread_pool pool(2);
    pool.reset_stats();
    pool.parallel_for(8, [&](int64_t, int) {
        const auto t0 = std::chrono::steady_clock::now();
        while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1)) {}
    });
    const auto s = pool.get_stats();
    CHECK(s.n_runs == 1);
    CHECK(s.busy_s >= 0.0075);
    CHECK(s.wall_s >= 0.004 - 1e-4);
    CHECK(s.idle_fraction() >= -0.05);   // clock granularity only
    CHECK(s.idle_fraction() <= 1.0);
    pool.reset_stats();
    CHECK(pool.get_stats().n_runs == 0);
    CHECK(pool.get_stats().busy_s == 0.0);
}
