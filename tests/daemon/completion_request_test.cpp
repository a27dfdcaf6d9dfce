#include <catch2/catch.hpp>

#include "daemon/pipeline/completion_pipeline.h"

using namespace hearth::daemon;
using namespace std::chrono_literals;

namespace {
completion_ask ask_at(std::string text, std::string_view marker) {
    completion_ask a;
    a.key = a.uri = "file:///t.py";
    a.cursor = text.find(marker);
    text.erase(a.cursor, marker.size());
    a.text = std::move(text);
    return a;
}
}  // namespace

TEST_CASE("a multi-line request gets the multi-line generation budget", "[daemon][completion]") {
    completion_settings s;
    s.time_budget_ms = 1000;
    s.multi_line_time_budget_ms = 2500;
    const completion_pipeline p(nullptr, s);
    // A body to write after a block opener: a block has more to say than a line.
    const auto body = p.request_for(ask_at("def f(x):\n@@\n", "@@"));
    CHECK(body.mode == completion_mode::multi_line);
    CHECK(body.time_budget == 2500ms);
    // Mid-line: the line's budget.
    const auto line = p.request_for(ask_at("def f(x):\n    return x +@@\n", "@@"));
    CHECK(line.mode == completion_mode::single_line);
    CHECK(line.time_budget == 1000ms);
}
