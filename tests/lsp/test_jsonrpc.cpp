#include <catch2/catch.hpp>

#include <string>

#include <boost/json/parse.hpp>

#include "lsp/jsonrpc.h"

using namespace hearth::lsp;
namespace json = boost::json;

namespace {

invalid_message expect_invalid(std::string_view body) {
    message m = parse_message(body);
    INFO(body);
    REQUIRE(std::holds_alternative<invalid_message>(m));
    return std::get<invalid_message>(m);
}

}  // namespace

TEST_CASE("jsonrpc: the one error-code mapping", "[lsp][jsonrpc]") {
    CHECK(jsonrpc_code(errc::parse_error) == -32700);
    CHECK(jsonrpc_code(errc::invalid_request) == -32600);
    CHECK(jsonrpc_code(errc::method_not_found) == -32601);
    CHECK(jsonrpc_code(errc::invalid_params) == -32602);
    CHECK(jsonrpc_code(errc::internal_error) == -32603);
    CHECK(jsonrpc_code(errc::server_not_initialized) == -32002);
    CHECK(jsonrpc_code(errc::shutting_down) == -32600);
    CHECK(jsonrpc_code(errc::request_cancelled) == -32800);
    CHECK(jsonrpc_code(errc::content_modified) == -32801);
    CHECK(jsonrpc_code(errc::request_failed) == -32803);
    CHECK(jsonrpc_code(errc::server_busy) == -32000);
}

TEST_CASE("jsonrpc: requests, notifications, responses", "[lsp][jsonrpc]") {
    SECTION("request with integer id") {
        message m = parse_message(R"({"jsonrpc":"2.0","id":7,"method":"shutdown"})");
        REQUIRE(std::holds_alternative<request>(m));
        const auto & r = std::get<request>(m);
        CHECK(r.id == request_id(7));
        CHECK(r.method == "shutdown");
        CHECK(r.params.is_null());
    }
    SECTION("null params, as clients send for void params, are taken as absent") {
        message m = parse_message(R"({"jsonrpc":"2.0","id":1,"method":"shutdown","params":null})");
        REQUIRE(std::holds_alternative<request>(m));
        CHECK(std::get<request>(m).params.is_null());
        message n = parse_message(R"({"jsonrpc":"2.0","method":"exit","params":null})");
        CHECK(std::holds_alternative<notification>(n));
    }
    SECTION("request with string id and array params") {
        message m = parse_message(R"({"method":"m","params":[1,2],"id":"a-1","jsonrpc":"2.0"})");
        REQUIRE(std::holds_alternative<request>(m));
        CHECK(std::get<request>(m).id == request_id(std::string("a-1")));
        CHECK(std::get<request>(m).params.is_array());
    }
    SECTION("notification") {
        message m = parse_message(R"({"jsonrpc":"2.0","method":"initialized","params":{}})");
        REQUIRE(std::holds_alternative<notification>(m));
        CHECK(std::get<notification>(m).method == "initialized");
    }
    SECTION("response with result and with error") {
        message m = parse_message(R"({"jsonrpc":"2.0","id":3,"result":null})");
        REQUIRE(std::holds_alternative<response>(m));
        CHECK(!std::get<response>(m).error);
        m = parse_message(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}})");
        REQUIRE(std::holds_alternative<response>(m));
        CHECK(std::get<response>(m).error);
        CHECK(std::get<response>(m).id.is_null());
    }
}

TEST_CASE("jsonrpc: parse errors answer -32700 with id null", "[lsp][jsonrpc]") {
    for (const char * body : {"", "{", "{\"jsonrpc\":\"2.0\",}", "nul", "{\"a\":\"\xff\"}", "{} {}"}) {
        auto bad = expect_invalid(body);
        CHECK(bad.error.code == errc::parse_error);
        CHECK(bad.id.is_null());
    }
}

TEST_CASE("jsonrpc: nesting past the limit is a parse error, not a deep recursion", "[lsp][jsonrpc]") {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    CHECK(expect_invalid(deep).error.code == errc::parse_error);
    const std::string ok = R"({"jsonrpc":"2.0","method":"m","params":)" + std::string(60, '[') + std::string(60, ']') + "}";
    CHECK(std::holds_alternative<notification>(parse_message(ok)));
    CHECK(std::holds_alternative<invalid_message>(parse_message(ok, parse_limits{.max_depth = 10})));
}

TEST_CASE("jsonrpc: invalid requests answer -32600, with the id when it is readable", "[lsp][jsonrpc]") {
    struct bad_case {
        const char * body;
        bool id_kept;
        const char * says;
    };
    const bad_case cases[] = {
        {R"([{"jsonrpc":"2.0","id":1,"method":"a"}])", false, "batch"},
        {R"([])", false, "batch"},
        {R"(42)", false, "expected a JSON-RPC object"},
        {R"("str")", false, "expected a JSON-RPC object"},
        {R"({"id":1,"method":"a"})", true, "\"jsonrpc\" must be \"2.0\""},
        {R"({"jsonrpc":"1.0","id":1,"method":"a"})", true, "\"jsonrpc\" must be \"2.0\""},
        {R"({"jsonrpc":2.0,"id":1,"method":"a"})", true, "\"jsonrpc\" must be \"2.0\""},
        {R"({"jsonrpc":"2.0","id":1,"method":5})", true, "\"method\" must be a string"},
        {R"({"jsonrpc":"2.0","method":5})", false, "\"method\" must be a string"},
        {R"({"jsonrpc":"2.0","id":1,"method":"a","params":"x"})", true, "\"params\" must be an object or an array"},
        {R"({"jsonrpc":"2.0","id":1,"method":"a","params":3})", true, "\"params\" must be an object or an array"},
        {R"({"jsonrpc":"2.0","id":1.5,"method":"a"})", false, "\"id\" must be an integer or a string"},
        {R"({"jsonrpc":"2.0","id":true,"method":"a"})", false, "\"id\" must be an integer or a string"},
        {R"({"jsonrpc":"2.0","id":null,"method":"a"})", false, "\"id\" must be an integer or a string"},
        {R"({"jsonrpc":"2.0","id":{},"method":"a"})", false, "\"id\" must be an integer or a string"},
        {R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"a"})", false, "out of the integer range"},
        {R"({"jsonrpc":"2.0"})", false, "neither"},
        {R"({"jsonrpc":"2.0","id":4})", true, "exactly one of"},
        {R"({"jsonrpc":"2.0","id":4,"result":1,"error":{}})", true, "exactly one of"},
        {R"({"jsonrpc":"2.0","id":4,"error":"x"})", true, "\"error\" must be an object"},
    };
    for (const auto & c : cases) {
        auto bad = expect_invalid(c.body);
        INFO(c.body);
        CHECK(bad.error.code == errc::invalid_request);
        CHECK(bad.id.is_null() == !c.id_kept);
        CHECK_THAT(bad.error.message, Catch::Contains(c.says));
    }
}

TEST_CASE("jsonrpc: bodies written", "[lsp][jsonrpc]") {
    CHECK(json::parse(result_body(request_id(1), nullptr)) == json::parse(R"({"jsonrpc":"2.0","id":1,"result":null})"));
    CHECK(json::parse(result_body(request_id(std::string("x")), json::value{{"text", "é"}})) ==
          json::parse(R"({"jsonrpc":"2.0","id":"x","result":{"text":"é"}})"));
    CHECK(json::parse(error_body(request_id(), rpc_error{errc::parse_error, "bad"})) ==
          json::parse(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}})"));
    CHECK(json::parse(notification_body("$/progress", json::value{{"token", 1}, {"value", 2}})) ==
          json::parse(R"({"jsonrpc":"2.0","method":"$/progress","params":{"token":1,"value":2}})"));
}

TEST_CASE("jsonrpc: request ids compare and print", "[lsp][jsonrpc]") {
    CHECK(request_id(1) != request_id(std::string("1")));
    CHECK(request_id(1).to_string() == "1");
    CHECK(request_id(std::string("a\"b")).to_string() == R"("a\"b")");
    CHECK(request_id().to_string() == "null");
}
