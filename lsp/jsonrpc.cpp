#include "lsp/jsonrpc.h"

#include <limits>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace hearth::lsp {

namespace json = boost::json;

json::value request_id::to_json() const {
    switch (v_.index()) {
    case 1: return json::value(std::get<1>(v_));
    case 2: return json::value(std::get<2>(v_));
    default: return json::value(nullptr);
    }
}

std::string request_id::to_string() const {
    return json::serialize(to_json());
}

int jsonrpc_code(errc e) {
    switch (e) {
    case errc::parse_error: return -32700;
    case errc::invalid_request: return -32600;
    case errc::method_not_found: return -32601;
    case errc::invalid_params: return -32602;
    case errc::internal_error: return -32603;
    case errc::server_not_initialized: return -32002;
    case errc::shutting_down: return -32600;   // the spec: InvalidRequest after shutdown
    case errc::request_cancelled: return -32800;
    case errc::content_modified: return -32801;
    case errc::request_failed: return -32803;
    case errc::server_busy: return -32000;     // first code of JSON-RPC's server-error range
    }
    return -32603;
}

namespace {

const char * kind_name(json::kind k) {
    switch (k) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "boolean";
    case json::kind::int64:
    case json::kind::uint64: return "integer";
    case json::kind::double_: return "number";
    case json::kind::string: return "string";
    case json::kind::array: return "array";
    case json::kind::object: return "object";
    }
    return "?";
}

invalid_message invalid(request_id id, std::string what) {
    return invalid_message{std::move(id), rpc_error{errc::invalid_request, std::move(what)}};
}

// Reads an id; nullopt with `why` set when it is not an integer or a string.
std::optional<request_id> read_id(const json::value & v, std::string & why) {
    if (v.is_int64()) return request_id(v.get_int64());
    if (v.is_uint64()) {
        if (v.get_uint64() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            return request_id(static_cast<int64_t>(v.get_uint64()));
        why = "\"id\" is out of the integer range";
        return std::nullopt;
    }
    if (v.is_string()) return request_id(std::string(v.get_string()));
    why = std::string("\"id\" must be an integer or a string, got ") + kind_name(v.kind());
    return std::nullopt;
}

}  // namespace

message parse_message(std::string_view body, const parse_limits & limits) {
    json::parse_options opts;
    opts.max_depth = limits.max_depth;
    boost::system::error_code ec;
    json::value v = json::parse(body, ec, {}, opts);
    if (ec) {
        return invalid_message{request_id(), rpc_error{errc::parse_error, "invalid JSON: " + ec.message()}};
    }
    if (v.is_array()) {
        return invalid(request_id(), "batch requests are not supported: send one JSON-RPC message per frame");
    }
    if (!v.is_object()) {
        return invalid(request_id(), std::string("expected a JSON-RPC object, got ") + kind_name(v.kind()));
    }
    json::object & o = v.get_object();

    // Read the id first, so that every later error can be answered with it.
    std::optional<request_id> id;
    if (const json::value * idv = o.if_contains("id")) {
        std::string why;
        if (idv->is_null() && !o.contains("method")) {
            id = request_id();   // an error response to an unreadable message of ours
        } else {
            id = read_id(*idv, why);
            if (!id) return invalid(request_id(), why);
        }
    }
    const request_id reply_id = id.value_or(request_id());

    const json::value * ver = o.if_contains("jsonrpc");
    if (!ver || !ver->is_string() || ver->get_string() != "2.0") {
        return invalid(reply_id, "\"jsonrpc\" must be \"2.0\"");
    }

    if (const json::value * m = o.if_contains("method")) {
        if (!m->is_string()) {
            return invalid(reply_id, std::string("\"method\" must be a string, got ") + kind_name(m->kind()));
        }
        // null is taken as absent: the spec types some params as void, and clients send null.
        json::value params(nullptr);
        if (json::value * p = o.if_contains("params"); p && !p->is_null()) {
            if (!p->is_object() && !p->is_array()) {
                return invalid(reply_id, std::string("\"params\" must be an object or an array, got ") +
                                             kind_name(p->kind()));
            }
            params = std::move(*p);
        }
        std::string method(m->get_string());
        if (id) return request{std::move(*id), std::move(method), std::move(params)};
        return notification{std::move(method), std::move(params)};
    }

    if (!id) return invalid(request_id(), "message has neither \"method\" nor \"id\"");
    const json::value * res = o.if_contains("result");
    const json::value * err = o.if_contains("error");
    if ((res != nullptr) == (err != nullptr)) {
        return invalid(reply_id, "a response must have exactly one of \"result\" and \"error\"");
    }
    if (err && !err->is_object()) return invalid(reply_id, "\"error\" must be an object");
    response r{std::move(*id), json::value(nullptr), std::nullopt};
    if (res) r.result = *res;
    if (err) r.error = *err;
    return r;
}

std::string result_body(const request_id & id, const json::value & result) {
    json::object o;
    o["jsonrpc"] = "2.0";
    o["id"] = id.to_json();
    o["result"] = result;
    return json::serialize(o);
}

std::string error_body(const request_id & id, const rpc_error & error) {
    json::object e;
    e["code"] = jsonrpc_code(error.code);
    e["message"] = error.message;
    json::object o;
    o["jsonrpc"] = "2.0";
    o["id"] = id.to_json();
    o["error"] = std::move(e);
    return json::serialize(o);
}

std::string notification_body(std::string_view method, const json::value & params) {
    json::object o;
    o["jsonrpc"] = "2.0";
    o["method"] = method;
    o["params"] = params;
    return json::serialize(o);
}

}  // namespace hearth::lsp
