// Replays tests/lsp/transcripts/*.jsonl through an in-memory connection (test_harness.h).
// Line format:
//   # comment                       (and blank lines) ignored
//   > <body>                        a message body from the client, framed and fed as is
//                                   (it need not be valid JSON)
//   >raw <bytes>                    raw stream bytes, with \r \n \\ \xNN escapes
//   < <json>                        the next message the server must have sent; the string
//                                   "<any>" matches any value, "<contains:TEXT>" any string
//                                   containing TEXT; objects must have exactly these keys
//   ! silent                        nothing more was sent
//   ! open | ! closed               the connection is still open / was closed
//   ! exit N                        exit was requested with exit code N
//   ! release                       answer the held (slow) completions
//   ! limits KEY=N ...              (first line only) max_body_bytes, max_header_bytes,
//                                   max_requests_in_flight, max_documents, max_document_bytes
// At the end of a transcript nothing may remain unread.
#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "tests/lsp/test_harness.h"

using namespace hearth::lsp;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

std::optional<std::string> mismatch(const json::value & want, const json::value & got, const std::string & path) {
    if (want.is_string()) {
        const std::string_view w = want.get_string();
        if (w == "<any>") return std::nullopt;
        if (w.starts_with("<contains:") && w.ends_with(">")) {
            const std::string_view needle = w.substr(10, w.size() - 11);
            if (got.is_string() && std::string_view(got.get_string()).find(needle) != std::string_view::npos)
                return std::nullopt;
            return path + ": expected a string containing '" + std::string(needle) + "', got " + json::serialize(got);
        }
    }
    if (want.is_object() && got.is_object()) {
        const auto & wo = want.get_object();
        const auto & go = got.get_object();
        for (const auto & [k, v] : wo) {
            const json::value * g = go.if_contains(k);
            if (!g) return path + "." + std::string(k) + ": missing";
            if (auto m = mismatch(v, *g, path + "." + std::string(k))) return m;
        }
        for (const auto & [k, v] : go) {
            if (!wo.contains(k)) return path + "." + std::string(k) + ": unexpected, " + json::serialize(v);
        }
        return std::nullopt;
    }
    if (want.is_array() && got.is_array()) {
        const auto & wa = want.get_array();
        const auto & ga = got.get_array();
        if (wa.size() != ga.size())
            return path + ": expected " + std::to_string(wa.size()) + " elements, got " + json::serialize(got);
        for (size_t i = 0; i < wa.size(); ++i)
            if (auto m = mismatch(wa[i], ga[i], path + "[" + std::to_string(i) + "]")) return m;
        return std::nullopt;
    }
    if (want == got) return std::nullopt;
    return path + ": expected " + json::serialize(want) + ", got " + json::serialize(got);
}

std::string unescape(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\' || i + 1 == s.size()) {
            out += s[i];
            continue;
        }
        const char c = s[++i];
        if (c == 'r') out += '\r';
        else if (c == 'n') out += '\n';
        else if (c == 'x' && i + 2 < s.size() + 1) {
            out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
            i += 2;
        } else out += c;
    }
    return out;
}

void run_transcript(const fs::path & file) {
    std::ifstream in(file);
    REQUIRE(in);
    server_limits limits;
    framing_limits framing;
    std::unique_ptr<testing::harness> h;
    std::deque<std::string> sent;   // bodies the server sent, not yet matched
    auto pull = [&] {
        for (auto & b : h->take_bodies()) sent.push_back(std::move(b));
    };
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        INFO(file.filename().string() << ":" << line_no << ": " << line);
        if (line.starts_with("! limits ")) {
            REQUIRE(!h);
            std::istringstream args(line.substr(9));
            std::string kv;
            while (args >> kv) {
                const auto eq = kv.find('=');
                REQUIRE(eq != std::string::npos);
                const std::string k = kv.substr(0, eq);
                const size_t v = std::stoul(kv.substr(eq + 1));
                if (k == "max_body_bytes") framing.max_body_bytes = v;
                else if (k == "max_header_bytes") framing.max_header_bytes = v;
                else if (k == "max_requests_in_flight") limits.max_requests_in_flight = v;
                else if (k == "max_documents") limits.documents.max_documents = v;
                else if (k == "max_document_bytes") limits.documents.max_document_bytes = v;
                else FAIL("unknown limit " << k);
            }
            continue;
        }
        if (!h) h = std::make_unique<testing::harness>(limits, framing);
        if (line.starts_with(">raw ")) {
            h->conn.feed(unescape(line.substr(5)));
        } else if (line.starts_with("> ")) {
            h->conn.feed(frame_message(line.substr(2)));
        } else if (line.starts_with("< ")) {
            pull();
            const json::value want = json::parse(line.substr(2));
            REQUIRE(!sent.empty());
            const std::string got_body = sent.front();
            sent.pop_front();
            INFO("server sent: " << got_body);
            boost::system::error_code ec;
            const json::value got = json::parse(got_body, ec);
            REQUIRE(!ec);
            const auto m = mismatch(want, got, "$");
            if (m) FAIL(*m);
        } else if (line == "! silent") {
            pull();
            if (!sent.empty()) FAIL("unexpected message: " << sent.front());
        } else if (line == "! open") {
            CHECK(h->conn.open());
        } else if (line == "! closed") {
            CHECK(!h->conn.open());
        } else if (line.starts_with("! exit ")) {
            CHECK(h->conn.protocol().exit_requested());
            CHECK(h->conn.protocol().exit_code() == std::stoi(line.substr(7)));
        } else if (line == "! release") {
            h->release_held();
        } else {
            FAIL("unknown transcript line");
        }
    }
    REQUIRE(h);
    pull();
    INFO(file.filename().string() << ": end");
    if (!sent.empty()) FAIL("unexpected message at the end: " << sent.front());
}

}  // namespace

TEST_CASE("transcripts: every tests/lsp/transcripts/*.jsonl replays", "[lsp][transcripts]") {
    const fs::path dir = fs::path(HEARTH_SOURCE_DIR) / "tests" / "lsp" / "transcripts";
    std::vector<fs::path> files;
    for (const auto & e : fs::directory_iterator(dir))
        if (e.path().extension() == ".jsonl") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 6);
    for (const auto & f : files) {
        DYNAMIC_SECTION(f.filename().string()) { run_transcript(f); }
    }
}
