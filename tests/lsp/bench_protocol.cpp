// Timings of the protocol layer, hidden from the default run:
//   build-lsp/tests/hearth_test_lsp "[.bench]"
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <string>

#include <boost/json/serialize.hpp>

#include "tests/lsp/test_harness.h"

using namespace hearth::lsp;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string big_document(size_t lines) {
    std::string text;
    for (size_t i = 0; i < lines; ++i) text += "    value_" + std::to_string(i) + " = compute(é, \"😀\", " + std::to_string(i) + ")\r\n";
    return text;
}

}  // namespace

TEST_CASE("bench: keystrokes through bytes -> framing -> JSON-RPC -> document store", "[lsp][.bench]") {
    for (size_t lines : {1000u, 20000u}) {
        testing::harness h;
        REQUIRE(h.send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}})"));
        const std::string text = big_document(lines);
        boost::json::object open{{"jsonrpc", "2.0"}, {"method", "textDocument/didOpen"},
                                 {"params", {{"textDocument", {{"uri", "file:///big.py"}, {"languageId", "python"}, {"version", 1}, {"text", text}}}}}};
        REQUIRE(h.send(boost::json::serialize(open)));
        // Pre-frame the stream, so that only the server's work is timed.
        const int n = 2000;
        std::string stream;
        for (int i = 0; i < n; ++i) {
            const uint32_t line = static_cast<uint32_t>((static_cast<size_t>(i) * 7919) % lines);
            stream += frame_message(R"({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///big.py","version":)" +
                                    std::to_string(i + 2) + R"(},"contentChanges":[{"range":{"start":{"line":)" + std::to_string(line) +
                                    R"(,"character":30},"end":{"line":)" + std::to_string(line) + R"(,"character":30}},"text":"x"}]}})");
        }
        const auto t0 = std::chrono::steady_clock::now();
        REQUIRE(h.conn.feed(stream));
        const double s = seconds_since(t0);
        REQUIRE(h.conn.protocol().documents().find("file:///big.py")->version() == n + 1);
        std::printf("didChange on a %zu-line (%zu KiB) document: %.1f us per keystroke (%d in %.3f s)\n", lines,
                    text.size() / 1024, s / n * 1e6, n, s);
    }
}

TEST_CASE("bench: request round trips through the server core", "[lsp][.bench]") {
    testing::harness h;
    REQUIRE(h.send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}})"));
    REQUIRE(h.send(R"({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a.py","languageId":"python","version":1,"text":"def f(x):\n    return x\n"}}})"));
    h.take_bodies();
    const int n = 50000;
    std::string stream;
    for (int i = 0; i < n; ++i) {
        stream += frame_message(R"({"jsonrpc":"2.0","id":)" + std::to_string(i + 10) +
                                R"(,"method":"textDocument/inlineCompletion","params":{"textDocument":{"uri":"file:///a.py"},"position":{"line":1,"character":10},"context":{"triggerKind":2}}})");
    }
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(h.conn.feed(stream));
    const double s = seconds_since(t0);
    REQUIRE(h.take_bodies().size() == static_cast<size_t>(n));
    std::printf("inlineCompletion request -> reply through the protocol layer: %.2f us each (%d in %.3f s)\n", s / n * 1e6, n, s);
}
