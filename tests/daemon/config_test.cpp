#include <catch2/catch.hpp>

#include <string_view>
#include <tuple>

#include "daemon/settings/config.h"

using namespace hearth::daemon;

TEST_CASE("config file sets every kind of key", "[daemon][config]") {
    daemon_config c;
    const char * text = R"(
model = "/models/coder.gguf"
threads = 6
cache-type = "q4_0"
kv-budget = "1.5GiB"
tcp = 7777
log-level = "debug"

[limits]
max-message-bytes = "1MiB"
max-queued = 8
partial-message-timeout-ms = 2500

[completion]
debounce-ms = 30
invoked-candidates = 2
chunk-reuse-min = 0
typed-ahead = false
prefetch = false
window-grid = true
retry-repeated-line = false
prompt-budget-ms = 800
time-budget-ms = 1500
multi-line-time-budget-ms = 2500
time-cap-ms = 0

[chat]
max-tokens = 256

[next_edit]
enabled = false
window-lines = 6
context-lines = 0
max-edits = 3
time-budget-ms = 900
warm-up = false
)";
    REQUIRE(load_config_text(text, "config.toml", c));
    CHECK(c.model_path == "/models/coder.gguf");
    CHECK(c.threads == 6);
    CHECK(c.cache_type == "q4_0");
    CHECK(c.kv_budget_bytes == 3ull * 512 * 1024 * 1024);
    CHECK(c.tcp_port == 7777);
    CHECK(c.log_level == "debug");
    CHECK(c.limits.max_message_bytes == 1u << 20);
    CHECK(c.limits.max_queued == 8);
    CHECK(c.limits.partial_message_timeout_ms == 2500);
    CHECK(c.completion.debounce_ms == 30);
    CHECK(c.completion.invoked_candidates == 2);
    CHECK(c.completion.chunk_reuse_min == 0);
    CHECK_FALSE(c.completion.typed_ahead);
    CHECK_FALSE(c.completion.prefetch);
    CHECK(c.completion.window_grid);
    CHECK_FALSE(c.completion.retry_repeated_line);
    CHECK(c.completion.prompt_budget_ms == 800);
    CHECK(c.completion.time_budget_ms == 1500);
    CHECK(c.completion.multi_line_time_budget_ms == 2500);
    CHECK(c.completion.time_cap_ms == 0);
    CHECK(c.chat.max_tokens == 256);
    CHECK_FALSE(c.next_edit.enabled);
    CHECK(c.next_edit.window_lines == 6);
    CHECK(c.next_edit.context_lines == 0);
    CHECK(c.next_edit.max_edits == 3);
    CHECK(c.next_edit.time_budget_ms == 900);
    CHECK_FALSE(c.next_edit.warm_up);
    CHECK(daemon_config{}.next_edit.enabled);   // on by default
    CHECK(validate(c));
}

TEST_CASE("config errors name the file, the line and the key", "[daemon][config]") {
    struct bad {
        const char * text;
        const char * want;
    };
    const bad cases[] = {
        {"modle = \"x\"\n", "c.toml:1: modle: unknown key"},
        {"\n\nthreads = \"four\"\n", "c.toml:3: threads: expected an integer"},
        {"tcp = 70000\n", "tcp: expected -1..65535, got 70000"},
        {"kv-budget = \"2 lightyears\"\n", "unknown unit"},
        {"[limits]\nmax-queud = 3\n", "limits.max-queud: unknown key"},
        {"limits = 3\n", "expected a table [limits]"},
        {"model = \n", "c.toml:1:"},
        {"listen-any = \"yes\"\n", "expected true or false"},
    };
    for (const auto & b : cases) {
        INFO(b.text);
        daemon_config c;
        auto s = load_config_text(b.text, "c.toml", c);
        REQUIRE_FALSE(s);
        CHECK_THAT(s.message(), Catch::Matchers::Contains(b.want));
    }
}

TEST_CASE("a missing optional config file is fine, a missing --config is not", "[daemon][config]") {
    daemon_config c;
    CHECK(load_config_file("/nonexistent/hearth/config.toml", false, c));
    auto s = load_config_file("/nonexistent/hearth/config.toml", true, c);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.message(), Catch::Matchers::Contains("/nonexistent/hearth/config.toml"));
}

TEST_CASE("parse_bytes", "[daemon][config]") {
    CHECK(*parse_bytes("4096") == 4096);
    CHECK(*parse_bytes("512KiB") == 512u * 1024);
    CHECK(*parse_bytes("2 MiB") == 2u << 20);
    CHECK(*parse_bytes("3G") == 3ull << 30);
    CHECK_FALSE(parse_bytes("-1"));
    CHECK_FALSE(parse_bytes("lots"));
    CHECK_FALSE(parse_bytes("1e30GiB"));
}

TEST_CASE("validate refuses bad values", "[daemon][config]") {
    daemon_config c;
    c.cache_type = "q5_k";
    CHECK_FALSE(validate(c));
    for (const auto & [both, k, v] : {std::tuple{"f32", "", ""}, {"f16", "q5_k", ""}, {"f16", "", "f32"}, {"f16/q9", "", ""}}) {
        c = daemon_config{};
        c.cache_type = both;
        c.cache_type_k = k;
        c.cache_type_v = v;
        const auto s = validate(c);
        REQUIRE_FALSE(s);
        CHECK_THAT(s.message(), Catch::Matchers::Contains("cache-type '"));
    }
    c = daemon_config{};
    c.log_level = "verbose";
    CHECK_FALSE(validate(c));
    c = daemon_config{};
    c.socket_path = "none";
    auto s = validate(c);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.message(), Catch::Matchers::Contains("no transport"));
}

TEST_CASE("the KV cache's K and V types: one key for both, one for each half, or a K/V pair", "[daemon][config]") {
    const auto types_of = [](std::string_view toml) {
        daemon_config c;
        REQUIRE(load_config_text(toml, "test.toml", c).has_value());
        REQUIRE(validate(c).has_value());
        return hearth::inference::kv_types_name(*kv_cache_types(c));
    };
    CHECK(types_of("") == "f16");
    CHECK(types_of("cache-type = \"q8_0\"") == "q8_0");
    CHECK(types_of("cache-type-v = \"q8_0\"") == "f16/q8_0");
    CHECK(types_of("cache-type = \"q4_0\"\ncache-type-k = \"f16\"") == "f16/q4_0");
    CHECK(types_of("cache-type = \"q8_0/f16\"") == "q8_0/f16");
}

TEST_CASE("the HTTP API's keys: off by default, a port, a token file or the explicit opt-out", "[daemon][config]") {
    daemon_config c;
    CHECK(c.http_port == -1);
    REQUIRE(load_config_text("http-port = 8012\nhttp-token-file = \"/t\"\n", "c.toml", c));
    CHECK(c.http_port == 8012);
    CHECK(c.http_token_file == "/t");
    CHECK(validate(c));
    c.http_no_token = true;
    auto s = validate(c);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.message(), Catch::Matchers::Contains("contradict"));
    daemon_config only_http;
    only_http.socket_path = "none";
    only_http.http_port = 0;
    CHECK(validate(only_http));   // the HTTP API alone is a transport
    daemon_config bad;
    auto e = load_config_text("http-port = 70000\n", "c.toml", bad);
    REQUIRE_FALSE(e);
    CHECK_THAT(e.message(), Catch::Matchers::Contains("http-port: expected -1..65535"));
    CHECK_FALSE(load_config_text("http-no-token = \"yes\"\n", "c.toml", bad));
}

TEST_CASE("the remote engine's keys: local by default, remote needs an http(s) URL and a known API", "[daemon][config]") {
    daemon_config c;
    CHECK(c.remote.engine == "local");
    CHECK(validate(c));
    REQUIRE(load_config_text("engine = \"remote\"\nremote-url = \"https://gpu.team:8000\"\nremote-api = \"llama-server\"\n"
                             "remote-model = \"coder\"\nremote-key-file = \"/k\"\nremote-budget-ms = 700\n",
                             "c.toml", c));
    CHECK(c.remote.engine == "remote");
    CHECK(c.remote.url == "https://gpu.team:8000");
    CHECK(c.remote.api == "llama-server");
    CHECK(c.remote.model == "coder");
    CHECK(c.remote.key_file == "/k");
    CHECK(c.remote.budget_ms == 700);
    CHECK(validate(c));
    c.remote.url = "gpu.team:8000";
    auto s = validate(c);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.message(), Catch::Matchers::Contains("engine = remote needs remote-url"));
    c.remote.url = "http://gpu.team:8000";
    c.remote.api = "vllm";
    s = validate(c);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.message(), Catch::Matchers::Contains("remote-api 'vllm': expected openai or llama-server"));
    daemon_config bad;
    auto e = load_config_text("remote-budget-ms = 0\n", "c.toml", bad);
    REQUIRE_FALSE(e);
    CHECK_THAT(e.message(), Catch::Matchers::Contains("remote-budget-ms"));
}
