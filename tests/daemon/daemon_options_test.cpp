// daemon_options: `hearth lsp` forwards every daemon option it takes, and `hearth daemon`
// reads back exactly what was forwarded (one description serves both commands).
#include <catch2/catch.hpp>

#include <algorithm>

#include "daemon/cli/daemon_options.h"

using namespace hearth;
using namespace hearth::daemon;

namespace {

// Parses args (without the program name) with the daemon options only.
daemon_options parse(std::vector<std::string> args) {
    CLI::App app;
    daemon_options o;
    add_daemon_options(&app, o, "");
    std::reverse(args.begin(), args.end());   // CLI11 takes the vector back to front
    app.parse(args);
    return o;
}

}  // namespace

TEST_CASE("daemon options: every option added is forwarded, and read back the same", "[daemon][cli]") {
    CLI::App app;
    daemon_options o;
    add_daemon_options(&app, o, "");
    std::vector<std::string> given;
    for (const CLI::Option * opt : app.get_options()) {
        const std::string name = opt->get_name(false, true);   // "--model"
        if (name.rfind("--", 0) != 0 || name == "--help") continue;
        given.push_back(name);
        given.push_back(name == "--threads" ? "3" : "value-of" + name);
    }
    REQUIRE(given.size() >= 20);   // the options of `hearth daemon` that `hearth lsp` forwards
    const daemon_options first = parse(given);
    const std::vector<std::string> forwarded = daemon_arguments(first);
    for (size_t i = 0; i < given.size(); i += 2) {
        INFO(given[i]);
        const auto at = std::find(forwarded.begin(), forwarded.end(), given[i]);
        REQUIRE(at != forwarded.end());
        REQUIRE(at + 1 != forwarded.end());
        CHECK(*(at + 1) == given[i + 1]);
    }
    CHECK(forwarded.size() == given.size());
    const daemon_options second = parse(forwarded);
    CHECK(daemon_arguments(second) == forwarded);
}

TEST_CASE("daemon options: apply over the config, with a clear error for a bad size", "[daemon][cli]") {
    daemon_config cfg;
    cfg.cache_type = "f16";
    cfg.threads = 1;
    daemon_options o = parse({"--cache-type", "q8_0", "--kv-budget", "512MiB"});
    REQUIRE(apply_daemon_options(o, cfg).has_value());
    CHECK(cfg.cache_type == "q8_0");
    CHECK(cfg.threads == 1);   // not given: the config's value stays
    CHECK(cfg.kv_budget_bytes == 512ull << 20);
    // One half alone changes that half; --cache-type names the whole cache again.
    cfg.cache_type_k = "q4_0";
    o = parse({"--cache-type-v", "q4_0"});
    REQUIRE(apply_daemon_options(o, cfg).has_value());
    CHECK(inference::kv_types_name(*kv_cache_types(cfg)) == "q4_0");
    o = parse({"--cache-type", "f16", "--cache-type-v", "q8_0"});
    REQUIRE(apply_daemon_options(o, cfg).has_value());
    CHECK(inference::kv_types_name(*kv_cache_types(cfg)) == "f16/q8_0");
    o = parse({"--kv-budget", "lots"});
    const auto s = apply_daemon_options(o, cfg);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.message().rfind("--kv-budget: ", 0) == 0);
}
