// Properties over random input (fixed seeds): encode then decode gives the input back, for
// arbitrary bytes including invalid UTF-8; the streaming detokenizer hands out whole
// characters only; concurrent tokenize calls agree; a 100 KB source file tokenizes fast.
#include <catch2/catch.hpp>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "inference/gguf/gguf_file.h"
#include "inference/tokenizer/detokenizer.h"
#include "inference/tokenizer/unicode.h"
#include "inference/tokenizer/vocab.h"

using namespace hearth::inference;
using namespace hearth::inference::tokenizer;

namespace {

const std::string k_fixtures = HEARTH_FIXTURES_DIR;

vocab open_fixture(const std::string & rel) {
    auto file = gguf::gguf_file::open(k_fixtures + "/" + rel);
    INFO(rel << ": " << (file ? "" : file.message()));
    REQUIRE(file);
    auto v = load_vocab(*file);
    INFO((v ? "" : v.message()));
    REQUIRE(v);
    return std::move(*v);
}

std::string random_bytes(std::mt19937 & rng, size_t max_len) {
    std::uniform_int_distribution<size_t> len(0, max_len);
    std::uniform_int_distribution<int> byte(0, 255);
    std::string s(len(rng), '\0');
    for (auto & c : s) c = char(byte(rng));
    return s;
}

// Valid UTF-8 mixing what source code holds: ASCII, whitespace runs, Latin, Cyrillic, CJK,
// emoji, SentencePiece's own space mark and special-token texts.
std::string random_text(std::mt19937 & rng, size_t n_parts) {
    static const std::vector<std::string> parts = {
        "a", "Z", "_", "x1", "foo", "Bar", " ", "  ", "    ", "\t", "\n", "\r\n", "\n\n", "0", "42", "3.14",
        "(", ")", "{", "}", ";", "->", "::", "==", "'", "'s", "\"", "//", "#", "é", "Äpfel", "привет", "日本語",
        "한국어", "🦙", "😶‍🌫️", "\xE2\x96\x81", "<s>", "</s>", "<|endoftext|>", "<fim_prefix>", "\xC2\xA0",
        "\xE3\x80\x80",
    };
    std::uniform_int_distribution<size_t> pick(0, parts.size() - 1);
    std::string s;
    for (size_t i = 0; i < n_parts; ++i) s += parts[pick(rng)];
    return s;
}

// SPM writes spaces as U+2581, so a U+2581 in the input comes back as a space.
std::string spm_expected(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s.compare(i, 3, "\xE2\x96\x81") == 0) {
            out += ' ';
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

// Bytes a vocabulary cannot spell come back as U+FFFD.
std::string bpe_expected(const vocab & v, const std::string & s) {
    std::string out;
    for (const char c : s) {
        if (v.find_token(byte_to_symbol(static_cast<unsigned char>(c))) == k_no_token) out += "\xEF\xBF\xBD";
        else out += c;
    }
    return out;
}

void check_stream(const vocab & v, const std::vector<token_id> & ids, bool valid_utf8_input) {
    stream_detokenizer stream(v);
    std::string joined, pieces;
    for (const auto id : ids) {
        const std::string chunk = stream.push(id);
        // Invalid input may hand out a sequence that a later lead byte cut short.
        if (valid_utf8_input) CHECK(utf8_incomplete_tail(chunk) == 0);
        CHECK(stream.held_bytes() <= 3);
        joined += chunk;
        pieces += v.piece(id);
    }
    if (valid_utf8_input) CHECK(stream.held_bytes() == 0);
    joined += stream.flush();
    CHECK(joined == pieces);
}

}  // namespace

TEST_CASE("round trip: arbitrary bytes through byte-level BPE", "[inference][tokenizer]") {
    const std::string name = GENERATE(as<std::string>{}, "gpt-2", "starcoder");
    const vocab v = open_fixture("tokenizer/ggml-vocab-" + name + ".gguf");
    std::mt19937 rng(42);
    for (int i = 0; i < 300; ++i) {
        const std::string text = i % 2 ? random_bytes(rng, 64) : random_text(rng, 20);
        const auto ids = v.tokenize(text, false, false);
        INFO(name << " case " << i);
        for (const auto id : ids) REQUIRE((id >= 0 && id < v.n_tokens()));
        CHECK(v.detokenize(ids) == bpe_expected(v, text));
        check_stream(v, ids, i % 2 == 0);
    }
}

TEST_CASE("round trip: arbitrary bytes through SentencePiece with byte fallback", "[inference][tokenizer]") {
    const std::string rel = GENERATE(as<std::string>{}, "tokenizer/ggml-vocab-llama-spm.gguf", "models/stories260K-F32.gguf");
    const vocab v = open_fixture(rel);
    std::mt19937 rng(7);
    for (int i = 0; i < 300; ++i) {
        const std::string text = i % 2 ? random_bytes(rng, 64) : random_text(rng, 20);
        const auto ids = v.tokenize(text, false, false);
        INFO(rel << " case " << i);
        for (const auto id : ids) REQUIRE((id >= 0 && id < v.n_tokens()));
        CHECK(v.detokenize(ids) == spm_expected(text));
        check_stream(v, ids, i % 2 == 0);
    }
}

TEST_CASE("round trip: valid UTF-8 through deepseek-coder", "[inference][tokenizer]") {
    // Its user-defined tokens spell the bytes C0, C1 and F5..FF as text, so only valid UTF-8
    // (which never holds those bytes) comes back unchanged.
    const vocab v = open_fixture("tokenizer/ggml-vocab-deepseek-coder.gguf");
    std::mt19937 rng(3);
    for (int i = 0; i < 300; ++i) {
        const std::string text = random_text(rng, 25);
        const auto ids = v.tokenize(text, false, false);
        INFO("case " << i);
        CHECK(v.detokenize(ids) == text);
    }
}

TEST_CASE("streaming detokenizer: characters split across byte tokens come out whole", "[inference][tokenizer]") {
    const vocab v = open_fixture("models/stories260K-F32.gguf");
    const std::string text = "caf\xC3\xA9 \xF0\x9F\xA6\x99 \xE6\x97\xA5";   // café 🦙 日
    const auto ids = v.tokenize(text, false, false);
    stream_detokenizer stream(v);
    std::vector<std::string> chunks;
    for (const auto id : ids) {
        auto c = stream.push(id);
        if (!c.empty()) chunks.push_back(c);
    }
    CHECK(stream.flush().empty());
    std::string joined;
    for (const auto & c : chunks) joined += c;
    CHECK(joined == " " + text);   // the stream keeps SPM's leading space
    CHECK(std::find(chunks.begin(), chunks.end(), "\xF0\x9F\xA6\x99") != chunks.end());

    // An unfinished sequence is held, then handed out by flush().
    stream.reset();
    const token_id lead = v.find_token("<0xF0>");
    CHECK(stream.push(lead).empty());
    CHECK(stream.held_bytes() == 1);
    CHECK(stream.flush() == "\xF0");
    // A lead byte that the next byte cannot continue is passed through.
    CHECK(stream.push(lead).empty());
    CHECK(stream.push(v.find_token("<0x41>")) == "\xF0" "A");
}

TEST_CASE("tokenize: concurrent calls agree with a single thread", "[inference][tokenizer]") {
    const vocab v = open_fixture("tokenizer/ggml-vocab-gpt-2.gguf");
    std::mt19937 rng(11);
    std::vector<std::string> texts;
    for (int i = 0; i < 64; ++i) texts.push_back(random_text(rng, 200));
    std::vector<std::vector<token_id>> want;
    for (const auto & t : texts) want.push_back(v.tokenize(t, false, false));
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < 4; ++round) {
                for (size_t i = 0; i < texts.size(); ++i) {
                    if (v.tokenize(texts[(i + t) % texts.size()], false, false) != want[(i + t) % texts.size()]) ++mismatches[t];
                }
            }
        });
    }
    for (auto & th : threads) th.join();
    for (const int m : mismatches) CHECK(m == 0);
}

namespace {

// About 100 KB of this repository's own C++ sources.
std::string repo_sources(size_t want_bytes) {
    std::string text;
    for (const auto * dir : {"inference", "kernels", "lsp", "daemon", "tests"}) {
        const std::filesystem::path root = std::filesystem::path(HEARTH_SOURCE_DIR) / dir;
        if (!std::filesystem::exists(root)) continue;
        std::vector<std::filesystem::path> files;
        for (const auto & e : std::filesystem::recursive_directory_iterator(root)) {
            const auto ext = e.path().extension();
            if (e.is_regular_file() && (ext == ".cpp" || ext == ".h")) files.push_back(e.path());
        }
        std::sort(files.begin(), files.end());
        for (const auto & f : files) {
            std::ifstream in(f, std::ios::binary);
            std::ostringstream ss;
            ss << in.rdbuf();
            text += ss.str();
            if (text.size() >= want_bytes) return text.substr(0, want_bytes);
        }
    }
    return text;
}

}  // namespace

TEST_CASE("tokenize: 100 KB of source stays far below the cost of a forward pass", "[inference][tokenizer]") {
    const std::string text = repo_sources(100 * 1024);
    REQUIRE(text.size() > 50 * 1024);
    for (const std::string rel : {"tokenizer/ggml-vocab-gpt-2.gguf", "tokenizer/ggml-vocab-llama-spm.gguf"}) {
        const vocab v = open_fixture(rel);
        const auto t0 = std::chrono::steady_clock::now();
        const auto ids = v.tokenize(text, false, false);
        const auto t1 = std::chrono::steady_clock::now();
        const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        INFO(rel << ": " << text.size() << " bytes -> " << ids.size() << " tokens in " << ms << " ms");
        CHECK(v.detokenize(ids) == text);
        // Generous bound (a loaded 2-core machine, sanitizer builds): it catches a quadratic
        // merge loop, not a slow day. The measured figures are in docs/tokenizer.md.
        CHECK(ms < 2000.0);
    }
}

namespace {

// CPU time of this thread: the machine running the tests is often shared, and wall time
// then measures the neighbours.
double thread_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

}  // namespace

TEST_CASE("tokenize: speed on 100 KB of source (run with [bench])", "[.][bench][tokenizer]") {
    const std::string text = repo_sources(100 * 1024);
    std::vector<std::string> rels = {"tokenizer/ggml-vocab-gpt-2.gguf", "tokenizer/ggml-vocab-starcoder.gguf",
                                     "tokenizer/ggml-vocab-deepseek-coder.gguf", "tokenizer/ggml-vocab-llama-spm.gguf"};
    if (const char * m = std::getenv("HEARTH_DEFAULT_MODEL"); m && std::filesystem::exists(m)) rels.push_back(m);
    for (const auto & rel : rels) {
        auto file = gguf::gguf_file::open(rel.front() == '/' ? rel : k_fixtures + "/" + rel);
        REQUIRE(file);
        const double l0 = thread_cpu_ms();
        auto v = load_vocab(*file);
        const double load_ms = thread_cpu_ms() - l0;
        REQUIRE(v);
        double cold = 0, warm = 1e9;
        size_t n = 0;
        for (int i = 0; i < 5; ++i) {
            const double t0 = thread_cpu_ms();
            n = v->tokenize(text, false, false).size();
            const double ms = thread_cpu_ms() - t0;
            if (i == 0) cold = ms;
            else warm = std::min(warm, ms);
        }
        WARN(rel << ": load " << load_ms << " ms; " << text.size() << " bytes -> " << n << " tokens; first call "
                 << cold << " ms, cached " << warm << " ms (thread CPU time)");
    }
}
