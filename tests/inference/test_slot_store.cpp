// slot_store: a slot written to disk reads back bit for bit and continues exactly as the
// original; every kind of bad file (other model, other key, other cache shape, truncated,
// extended, any flipped byte) is refused with a reason and leaves the sequence untouched.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include <csignal>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "inference/forward/engine.h"
#include "tests/inference/tiny_engine.h"
#include "inference/gguf/gguf_file.h"
#include "inference/model/model.h"
#include "inference/session/slot_store.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;

namespace {

struct temp_dir {
    std::string path = (std::filesystem::temp_directory_path() / ("hearth-slot-store-" + std::to_string(::getpid()))).string();
    temp_dir() { std::filesystem::remove_all(path); }
    ~temp_dir() { std::filesystem::remove_all(path); }
};

std::vector<uint8_t> read_all(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::string & path, const std::vector<uint8_t> & b) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(b.data()), static_cast<std::streamsize>(b.size()));
}

std::vector<token_id> prompt_of(int n) {
    std::vector<token_id> p;
    for (int i = 0; i < n; ++i) p.push_back(3 + (i * 31) % 500);
    return p;
}

// Runs `body` in a child process with a deadline and a cap on its address space, so a load
// that blocks or reads without bound fails the test instead of hanging or exhausting the
// machine. The exit code of `body`, or 128 + the signal that ended the child.
int in_child(const std::function<int()> & body, unsigned seconds = 5) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
#if !defined(__SANITIZE_ADDRESS__)
        rlimit as{};
        ::getrlimit(RLIMIT_AS, &as);
        std::ifstream statm("/proc/self/statm");
        uint64_t pages = 0;
        statm >> pages;
        as.rlim_cur = pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) + (512ull << 20);
        ::setrlimit(RLIMIT_AS, &as);
#endif
        ::alarm(seconds);
        int code = 99;
        try {
            code = body();
        } catch (...) {
            code = 98;
        }
        ::_exit(code);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

model_identity the_model() {
    auto id = identify_model(k_tiny_model_path);
    REQUIRE(id.has_value());
    return *id;
}

}  // namespace

TEST_CASE("model identity: stable for a file, different for another, an error for a missing one", "[inference][slot_store]") {
    const auto a = the_model();
    CHECK(a == the_model());
    auto b = identify_model(std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F16.gguf");
    REQUIRE(b.has_value());
    CHECK_FALSE(a == *b);
    CHECK(a.hex().size() == 32);
    CHECK_THAT(identify_model("/nonexistent/model.gguf").message(), Catch::Contains("/nonexistent/model.gguf"));
}

TEST_CASE("slot directory follows XDG_CACHE_HOME, then HOME", "[inference][slot_store]") {
    const char * xdg = std::getenv("XDG_CACHE_HOME");
    const std::string saved = xdg ? xdg : "";
    ::setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
    CHECK(*default_slot_dir() == "/tmp/xdg-test/hearth/slots");
    ::unsetenv("XDG_CACHE_HOME");
    if (const char * h = std::getenv("HOME")) CHECK(*default_slot_dir() == std::string(h) + "/.cache/hearth/slots");
    if (xdg) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}

TEST_CASE("slot store round trip: same tokens, same rows, same next logits", "[inference][slot_store]") {
    auto & t = tiny_model();
    // K and V of one type, and of two (rows of different sizes).
    const auto type = GENERATE(kv_types(kernels::tensor_type::f32), kv_types(kernels::tensor_type::f16),
                               kv_types(kernels::tensor_type::f16, kernels::tensor_type::f32));
    temp_dir dir;
    slot_store store(dir.path, the_model());
    sequence a(t.eng->make_cache(type, 512));
    std::vector<float> la, lb;
    REQUIRE(prefill(*t.eng, a, prompt_of(300), la).has_value());
    REQUIRE(store.save("file:///x.cpp", a).has_value());
    CHECK(store.has("file:///x.cpp"));
    CHECK_FALSE(store.has("file:///y.cpp"));

    sequence b(t.eng->make_cache(type, 512));
    auto loaded = store.load("file:///x.cpp", b, 512);
    REQUIRE(loaded.has_value());
    CHECK(*loaded);
    CHECK(b.tokens == a.tokens);
    REQUIRE(b.cache.n_pos() == 300);
    for (int32_t il = 0; il < a.cache.n_layer(); ++il) {
        CHECK(std::memcmp(a.cache.k_data(il), b.cache.k_data(il), 300 * a.cache.row_bytes(kv_half::k)) == 0);
        CHECK(std::memcmp(a.cache.v_data(il), b.cache.v_data(il), 300 * a.cache.row_bytes(kv_half::v)) == 0);
    }
    REQUIRE(decode_one(*t.eng, a, 42, la).has_value());
    REQUIRE(decode_one(*t.eng, b, 42, lb).has_value());
    CHECK(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)) == 0);

    sequence c(t.eng->make_cache(type, 512));  // a shorter request keeps a prefix
    REQUIRE(*store.load("file:///x.cpp", c, 100));
    CHECK(c.cache.n_pos() == 100);
    CHECK(c.tokens == std::vector<token_id>(a.tokens.begin(), a.tokens.begin() + 100));

    sequence d(t.eng->make_cache(type, 512));
    auto none = store.load("file:///y.cpp", d, 512);
    REQUIRE(none.has_value());
    CHECK_FALSE(*none);
    store.remove("file:///x.cpp");
    CHECK_FALSE(store.has("file:///x.cpp"));
}

TEST_CASE("slot store prune deletes the oldest files down to a byte cap", "[inference][slot_store]") {
    auto & t = tiny_model();
    temp_dir dir;
    slot_store store(dir.path, the_model());
    sequence a(t.eng->make_cache(kernels::tensor_type::f32, 512));
    std::vector<float> logits;
    REQUIRE(prefill(*t.eng, a, prompt_of(50), logits).has_value());
    const std::vector<std::string> keys{"k0", "k1", "k2", "k3"};
    for (size_t i = 0; i < keys.size(); ++i) {
        REQUIRE(store.save(keys[i], a).has_value());
        // Distinct, increasing write times whatever the file system's clock resolution.
        std::filesystem::last_write_time(store.path_for(keys[i]),
                                         std::filesystem::file_time_type::clock::now() - std::chrono::hours(10 - i));
    }
    const uint64_t one = std::filesystem::file_size(store.path_for("k0"));
    CHECK(store.prune(4 * one) == 0);
    CHECK(store.prune(2 * one + one / 2) == 2);
    CHECK_FALSE(store.has("k0"));
    CHECK_FALSE(store.has("k1"));
    CHECK(store.has("k2"));
    CHECK(store.has("k3"));
    CHECK(store.prune(0) == 2);
}

TEST_CASE("slot store refuses every bad file and leaves the sequence untouched", "[inference][slot_store]") {
    auto & t = tiny_model();
    temp_dir dir;
    const auto id = the_model();
    slot_store store(dir.path, id);
    sequence a(t.eng->make_cache(kernels::tensor_type::f32, 512));
    std::vector<float> logits;
    REQUIRE(prefill(*t.eng, a, prompt_of(40), logits).has_value());
    const std::string key = "file:///x.cpp";
    REQUIRE(store.save(key, a).has_value());
    const std::string path = store.path_for(key);
    const auto good = read_all(path);
    REQUIRE(good.size() > 100);

    auto expect_refused = [&](const std::vector<uint8_t> & bytes, const std::string & why, const slot_store & s,
                              kv_types type = kernels::tensor_type::f32) {
        write_all(s.path_for(key), bytes);
        sequence b(t.eng->make_cache(type, 512));
        REQUIRE(prefill(*t.eng, b, std::vector<token_id>{5, 6, 7}, logits).has_value());
        auto r = s.load(key, b, 512);
        REQUIRE_FALSE(r.has_value());
        CHECK_THAT(r.message(), Catch::Contains(why));
        CHECK(b.tokens == std::vector<token_id>{5, 6, 7});
        CHECK(b.cache.n_pos() == 3);
    };

    SECTION("empty and truncated files") {
        expect_refused({}, "too short", store);
        for (size_t n : {size_t{4}, size_t{8}, size_t{20}, size_t{60}, good.size() / 2, good.size() - 1}) {
            INFO("truncated to " << n << " of " << good.size() << " bytes");
            std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<long>(n));
            auto b = sequence(t.eng->make_cache(kernels::tensor_type::f32, 512));
            write_all(path, cut);
            CHECK_FALSE(store.load(key, b, 512).has_value());
            CHECK(b.cache.n_pos() == 0);
        }
    }
    SECTION("extended file") {
        auto longer = good;
        longer.push_back(0);
        expect_refused(longer, "bytes, expected", store);
    }
    SECTION("every single flipped byte") {
        // Every byte is covered: the header by its checks, the rest by the checksum.
        for (size_t i = 0; i < good.size(); i += (i < 200 ? 1 : 97)) {
            INFO("byte " << i << " of " << good.size());
            auto bad = good;
            bad[i] ^= 0x10;
            write_all(path, bad);
            auto b = sequence(t.eng->make_cache(kernels::tensor_type::f32, 512));
            CHECK_FALSE(store.load(key, b, 512).has_value());
            CHECK(b.tokens.empty());
        }
        auto bad = good;
        bad[good.size() - 300] ^= 1;  // a K/V byte
        expect_refused(bad, "checksum", store);
        bad = good;
        bad[0] = 'X';
        expect_refused(bad, "magic", store);
        bad = good;
        bad[8] = 99;
        expect_refused(bad, "version 99", store);
    }
    SECTION("a file made for another model") {
        model_identity other = id;
        other.bytes[0] ^= 1;
        slot_store other_store(dir.path, other);
        std::filesystem::create_directories(other_store.dir());
        expect_refused(good, "another model", other_store);
    }
    SECTION("a file holding another key") {
        std::filesystem::copy_file(path, store.path_for("file:///other.cpp"));
        sequence b(t.eng->make_cache(kernels::tensor_type::f32, 512));
        auto r = store.load("file:///other.cpp", b, 512);
        REQUIRE_FALSE(r.has_value());
        CHECK_THAT(r.message(), Catch::Contains("another key"));
    }
    SECTION("a cache of another type or shape") {
        expect_refused(good, "cache shape", store, kernels::tensor_type::f16);
    }
    SECTION("a cache whose K or V alone has another type") {
        expect_refused(good, "cache shape", store, kv_types(kernels::tensor_type::f32, kernels::tensor_type::f16));
        expect_refused(good, "cache shape", store, kv_types(kernels::tensor_type::f16, kernels::tensor_type::f32));
    }
}

TEST_CASE("slot store: a FIFO, a link to /dev/zero or a huge sparse file is refused without reading it", "[inference][slot_store]") {
    auto & t = tiny_model();
    temp_dir dir;
    slot_store store(dir.path, the_model());
    sequence a(t.eng->make_cache(kernels::tensor_type::f32, 512));
    std::vector<float> logits;
    REQUIRE(prefill(*t.eng, a, prompt_of(40), logits).has_value());
    const std::string key = "file:///x.cpp";
    REQUIRE(store.save(key, a).has_value());
    const std::string path = store.path_for(key);
    const auto good = read_all(path);

    // Exit code 0: refused at once with `why`, the sequence untouched.
    auto refused_in_child = [&](const std::string & why) {
        return in_child([&] {
            sequence b(t.eng->make_cache(kernels::tensor_type::f32, 512));
            const auto t0 = std::chrono::steady_clock::now();
            auto r = store.load(key, b, 512);
            const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            if (r.has_value()) return 2;
            if (r.message().find(why) == std::string::npos) return 3;
            if (b.cache.n_pos() != 0) return 4;
            return ms < 500 ? 0 : 5;
        });
    };
    std::filesystem::remove(path);
    SECTION("a FIFO") {
        REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
        CHECK(refused_in_child("not a regular file") == 0);
    }
    SECTION("a symbolic link to /dev/zero") {
        std::filesystem::create_symlink("/dev/zero", path);
        CHECK(refused_in_child("symbolic link") == 0);
    }
    SECTION("a symbolic link to a good slot file") {
        write_all(dir.path + "/elsewhere", good);
        std::filesystem::create_symlink(dir.path + "/elsewhere", path);
        CHECK(refused_in_child("symbolic link") == 0);
    }
    SECTION("a 64 GiB sparse file behind a good header") {
        write_all(path, good);
        std::filesystem::resize_file(path, 64ull << 30);
        CHECK(refused_in_child("bytes, expected") == 0);
    }
    SECTION("a 64 GiB sparse file of zeros") {
        write_all(path, {});
        std::filesystem::resize_file(path, 64ull << 30);
        CHECK(refused_in_child("magic") == 0);
    }
}

TEST_CASE("slot store: stale temporaries are removed, and everything in the folder counts against the budget",
          "[inference][slot_store]") {
    auto & t = tiny_model();
    temp_dir dir;
    slot_store store(dir.path, the_model());
    sequence a(t.eng->make_cache(kernels::tensor_type::f32, 512));
    std::vector<float> logits;
    REQUIRE(prefill(*t.eng, a, prompt_of(50), logits).has_value());
    REQUIRE(store.save("k0", a).has_value());
    REQUIRE(store.save("k1", a).has_value());
    const uint64_t one = std::filesystem::file_size(store.path_for("k0"));
    auto age = [](const std::string & p, int hours) {
        std::filesystem::last_write_time(p, std::filesystem::file_time_type::clock::now() - std::chrono::hours(hours));
    };
    age(store.path_for("k0"), 5);
    age(store.path_for("k1"), 4);

    SECTION("a temporary left by a killed daemon is removed when a store opens the folder") {
        // pid 2^22 + 1 is past Linux's largest pid, so no process has it.
        const std::string dead = store.path_for("k0") + ".tmp4194305";
        const std::string live = store.path_for("k1") + ".tmp1";   // init's: a writer that is alive
        write_all(dead, std::vector<uint8_t>(one, 7));
        write_all(live, std::vector<uint8_t>(10, 7));
        slot_store reopened(dir.path, the_model());
        CHECK_FALSE(std::filesystem::exists(dead));
        CHECK(std::filesystem::exists(live));
        CHECK(reopened.has("k0"));
        CHECK(reopened.has("k1"));
    }
    SECTION("a temporary and a stray file are pruned like slots, oldest first") {
        const std::string tmp = store.path_for("k2") + ".tmp1";
        write_all(tmp, std::vector<uint8_t>(3 * one, 7));
        age(tmp, 6);
        write_all(store.dir() + "/stray", std::vector<uint8_t>(one, 7));
        age(store.dir() + "/stray", 3);
        // 6 slot-sized units in the folder, 2.5 allowed: the temporary (oldest, 3 units) and k0 go.
        CHECK(store.prune(2 * one + one / 2) == 2);
        CHECK_FALSE(std::filesystem::exists(tmp));
        CHECK_FALSE(store.has("k0"));
        CHECK(store.has("k1"));
        CHECK(std::filesystem::exists(store.dir() + "/stray"));
    }
}

TEST_CASE("slot store: smoothed K rows and plain ones never load into each other's caches", "[inference][slot_store][k_smoothing]") {
    // The same K type holds rows of another meaning when smoothed (k / s, k_smoothing.h).
    temp_dir dir;
    slot_store store(dir.path, the_model());
    auto make = [](bool smoothed) {
        sequence s(kv_cache(kernels::tensor_type::q8_0, 2, 64, 64, smoothed));
        s.cache.reserve(5);
        s.cache.set_n_pos(5);
        s.tokens = {1, 2, 3, 4, 5};
        s.n_batch_rows = 5;
        return s;
    };
    for (const bool saved_smoothed : {false, true}) {
        INFO("saved " << (saved_smoothed ? "smoothed" : "plain"));
        REQUIRE(store.save("k", make(saved_smoothed)).has_value());
        auto same = make(saved_smoothed);
        same.cache.clear();
        same.tokens.clear();
        const auto ok = store.load("k", same, 64);
        REQUIRE(ok.has_value());
        CHECK(*ok);
        CHECK(same.cache.n_pos() == 5);
        auto other = make(!saved_smoothed);
        const auto refused = store.load("k", other, 64);
        REQUIRE_FALSE(refused.has_value());
        CHECK_THAT(refused.message(), Catch::Contains("cache shape"));
    }
}
