// session_cache: LRU eviction under a byte budget with exact accounting, the served slot never
// evicted, a request larger than the whole budget refused; with a slot store attached,
// evicted slots go to disk and come back, and a bad file is refused and removed.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <unistd.h>

#include "inference/forward/engine.h"
#include "tests/inference/tiny_engine.h"
#include "inference/gguf/gguf_file.h"
#include "inference/model/model.h"
#include "inference/session/session_cache.h"
#include "inference/session/slot_store.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;

namespace {

// One 256-position step of the tiny model's f16 cache.
uint64_t step_bytes() {
    const auto & hp = tiny_model().mdl.hp();
    return kv_bytes_per_token(kernels::tensor_type::f16, hp.n_layer, hp.n_embd_kv()) * kv_cache::k_grow_positions;
}

using keys = std::vector<std::string>;

struct temp_dir {
    std::string path = (std::filesystem::temp_directory_path() / ("hearth-session-cache-" + std::to_string(::getpid()))).string();
    temp_dir() { std::filesystem::remove_all(path); }
    ~temp_dir() { std::filesystem::remove_all(path); }
};

std::vector<token_id> prompt_of(int n, int seed) {
    std::vector<token_id> p;
    for (int i = 0; i < n; ++i) p.push_back(3 + (i * 7 + seed * 13) % 500);
    return p;
}

}  // namespace

TEST_CASE("session cache: budget accounting and LRU eviction are exact", "[inference][session_cache]") {
    auto & t = tiny_model();
    session_cache sc(*t.eng, kernels::tensor_type::f16, 1024, 3 * step_bytes());
    CHECK(sc.bytes_for_positions(1) == step_bytes());
    CHECK(sc.bytes_for_positions(256) == step_bytes());
    CHECK(sc.bytes_for_positions(257) == 2 * step_bytes());
    CHECK(sc.bytes_for_positions(1024) == 4 * step_bytes());

    REQUIRE(sc.acquire("a", 100).has_value());
    REQUIRE(sc.acquire("b", 100).has_value());
    REQUIRE(sc.acquire("c", 100).has_value());
    CHECK(sc.keys_by_recency() == keys{"c", "b", "a"});
    CHECK(sc.stats().used_bytes == 3 * step_bytes());
    CHECK(sc.stats().n_evictions == 0);

    REQUIRE(sc.acquire("a", 50).has_value());  // a hit makes a the most recent; storage kept
    CHECK(sc.keys_by_recency() == keys{"a", "c", "b"});
    CHECK(sc.stats().n_hits == 1);

    REQUIRE(sc.acquire("d", 10).has_value());  // the least recently used (b) goes
    CHECK(sc.keys_by_recency() == keys{"d", "a", "c"});
    CHECK(sc.stats().n_evictions == 1);
    CHECK(sc.stats().used_bytes == 3 * step_bytes());

    // The served slot grows to two steps: the least recent other (c) goes, never a itself.
    auto a = sc.acquire("a", 300);
    REQUIRE(a.has_value());
    CHECK((*a)->cache.allocated_bytes() == 2 * step_bytes());
    CHECK(sc.keys_by_recency() == keys{"a", "d"});
    CHECK(sc.stats().used_bytes == 3 * step_bytes());

    // The served slot takes the whole budget: every other slot goes, it stays.
    REQUIRE(sc.acquire("a", 700).has_value());
    CHECK(sc.keys_by_recency() == keys{"a"});
    CHECK(sc.stats().used_bytes == 3 * step_bytes());
    CHECK(sc.stats().n_evictions == 3);
    CHECK(sc.stats().n_slots == 1);
}

TEST_CASE("session cache: a request larger than the whole budget is refused and changes nothing", "[inference][session_cache]") {
    auto & t = tiny_model();
    session_cache sc(*t.eng, kernels::tensor_type::f16, 1024, 2 * step_bytes());
    REQUIRE(sc.acquire("a", 100).has_value());
    REQUIRE(sc.acquire("b", 100).has_value());
    const auto before = sc.stats();
    auto big = sc.acquire("a", 600);
    REQUIRE_FALSE(big.has_value());
    CHECK_THAT(big.message(), Catch::Contains("more than the whole budget"));
    CHECK_THAT(big.message(), Catch::Contains(std::to_string(3 * step_bytes()) + " bytes"));
    CHECK_THAT(sc.acquire("x", 2000).message(), Catch::Contains("do not fit the context of 1024"));
    CHECK_THAT(sc.acquire("x", 0).message(), Catch::Contains("do not fit"));
    CHECK(sc.keys_by_recency() == keys{"b", "a"});
    CHECK(sc.stats().used_bytes == before.used_bytes);
    CHECK(sc.stats().n_requests == before.n_requests);
}

TEST_CASE("session cache: tokens held and reuse counters follow prefill", "[inference][session_cache]") {
    auto & t = tiny_model();
    session_cache sc(*t.eng, kernels::tensor_type::f32, 512, 4 * step_bytes() * 2);
    std::vector<float> logits;
    auto p = prompt_of(120, 1);
    auto s = sc.acquire("a", 130);
    REQUIRE(s.has_value());
    auto pf = prefill(*t.eng, **s, p, logits);
    REQUIRE(pf.has_value());
    sc.record(*pf);
    p[100] = 9;
    s = sc.acquire("a", 130);
    REQUIRE(s.has_value());
    pf = prefill(*t.eng, **s, p, logits);
    REQUIRE(pf.has_value());
    sc.record(*pf);
    const auto st = sc.stats();
    CHECK(st.tokens_held == 120);
    CHECK(st.tokens_reused == 100);
    CHECK(st.tokens_evaluated == 140);
    CHECK(st.n_hits == 1);
}

TEST_CASE("session cache: a document's prompts go to the slot that reuses most of them", "[inference][session_cache]") {
    auto & t = tiny_model();
    session_cache sc(*t.eng, kernels::tensor_type::f32, 512, 8 * step_bytes() * 2);
    std::vector<float> logits;
    auto run = [&](const std::string & key, const std::vector<token_id> & p) {
        auto s = sc.acquire(key, static_cast<int32_t>(p.size()) + 1);
        REQUIRE(s.has_value());
        REQUIRE(prefill(*t.eng, **s, p, logits).has_value());
    };
    const auto top = prompt_of(120, 1), low = prompt_of(120, 2);
    CHECK(sc.pick_slot("d", top, 0, 2) == "d");   // the first slot
    run("d", top);
    // Another place in the file (nothing in common): a second slot while there is room.
    CHECK(sc.pick_slot("d", low, 0, 2) == "d\n1");
    CHECK(sc.pick_slot("d", low, 0, 1) == "d");    // one slot per document: always that one
    run("d\n1", low);
    // Back at each place, edited near the end: the slot that holds it.
    auto top2 = top, low2 = low;
    top2[110] = 9;
    low2[115] = 9;
    CHECK(sc.pick_slot("d", top2, 0, 2) == "d");
    CHECK(sc.pick_slot("d", low2, 0, 2) == "d\n1");
    // An insertion near the start breaks the common prefix; with chunk reuse the moved rest
    // still counts, so the prompt stays with its slot.
    auto shifted = low;
    shifted.insert(shifted.begin() + 2, {5, 6, 7});
    CHECK(sc.pick_slot("d", shifted, 64, 3) == "d\n1");
    CHECK(sc.pick_slot("d", shifted, 0, 3) == "d\n2");
    // Closing the document drops every slot of it, and no other document's.
    run("e", top);
    sc.evict_document("d");
    CHECK_FALSE(sc.contains("d"));
    CHECK_FALSE(sc.contains("d\n1"));
    CHECK(sc.contains("e"));
}

TEST_CASE("session cache with a slot store: evicted slots are saved and restored, bad files refused",
          "[inference][session_cache][slot_store]") {
    auto & t = tiny_model();
    temp_dir dir;
    auto id = identify_model(std::string(HEARTH_FIXTURES_DIR) + "/models/stories260K-F32.gguf");
    REQUIRE(id.has_value());
    slot_store store(dir.path, *id);
    session_cache sc(*t.eng, kernels::tensor_type::f16, 512, 2 * step_bytes());
    sc.attach_store(&store);
    std::vector<float> logits, want;

    const auto pa = prompt_of(150, 1), pb = prompt_of(150, 2), pc = prompt_of(150, 3);
    auto s = sc.acquire("file:///a.cpp", 160);
    REQUIRE(s.has_value());
    REQUIRE(prefill(*t.eng, **s, pa, want).has_value());
    s = sc.acquire("file:///b.cpp", 160);
    REQUIRE(s.has_value());
    REQUIRE(prefill(*t.eng, **s, pb, logits).has_value());
    s = sc.acquire("file:///c.cpp", 160);  // evicts a.cpp, which is saved
    REQUIRE(s.has_value());
    CHECK(sc.stats().n_saved == 1);
    CHECK(store.has("file:///a.cpp"));

    s = sc.acquire("file:///a.cpp", 160);  // evicts b.cpp, restores a.cpp
    REQUIRE(s.has_value());
    CHECK(sc.stats().n_restored == 1);
    CHECK((*s)->tokens == pa);
    auto pf = prefill(*t.eng, **s, pa, logits);
    REQUIRE(pf.has_value());
    CHECK(pf->n_reused == 148);   // the last two tokens are evaluated again
    CHECK(std::memcmp(logits.data(), want.data(), want.size() * sizeof(float)) == 0);

    REQUIRE(sc.save_all().has_value());
    CHECK(sc.stats().n_saved == 3);  // a and b on eviction, then a (c holds nothing and is skipped)
    CHECK(sc.take_warnings().empty());

    // A corrupted file for b: refused with a warning, removed, and the slot starts empty.
    {
        std::fstream f(store.path_for("file:///b.cpp"), std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(200);
        f.put('\x5a');
    }
    sc.erase("file:///b.cpp");
    s = sc.acquire("file:///b.cpp", 160);
    REQUIRE(s.has_value());
    CHECK((*s)->tokens.empty());
    CHECK(sc.stats().n_rejected == 1);
    const auto w = sc.take_warnings();
    REQUIRE(w.size() == 1);
    CHECK_THAT(w[0], Catch::Contains("checksum"));
    CHECK_FALSE(store.has("file:///b.cpp"));
}
