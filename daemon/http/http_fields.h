// http_fields: reading a request body's optional fields, each with its default, and an error
// that names the field and says what was expected ("n_predict: expected an integer").
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "base/result.h"

namespace hearth::daemon::http_fields {

inline result<std::string> text(const boost::json::object & o, std::string_view name, std::string fallback = {}) {
    const auto * v = o.if_contains(name);
    if (!v || v->is_null()) return fallback;
    if (!v->is_string()) return fail(name, ": expected a string");
    return std::string(v->get_string());
}

inline result<int64_t> integer(const boost::json::object & o, std::string_view name, int64_t fallback, int64_t lo, int64_t hi) {
    const auto * v = o.if_contains(name);
    if (!v || v->is_null()) return fallback;
    int64_t n = 0;
    if (v->is_int64()) n = v->get_int64();
    else if (v->is_uint64() && v->get_uint64() <= static_cast<uint64_t>(INT64_MAX)) n = static_cast<int64_t>(v->get_uint64());
    else if (v->is_double() && v->get_double() == static_cast<double>(static_cast<int64_t>(v->get_double())))
        n = static_cast<int64_t>(v->get_double());
    else return fail(name, ": expected an integer");
    if (n < lo || n > hi) return fail(name, ": expected ", lo, "..", hi, ", got ", n);
    return n;
}

inline result<double> number(const boost::json::object & o, std::string_view name, double fallback, double lo, double hi) {
    const auto * v = o.if_contains(name);
    if (!v || v->is_null()) return fallback;
    if (!v->is_number()) return fail(name, ": expected a number");
    const double d = v->to_number<double>();
    if (!(d >= lo && d <= hi)) return fail(name, ": expected ", lo, "..", hi, ", got ", d);
    return d;
}

inline result<bool> boolean(const boost::json::object & o, std::string_view name, bool fallback) {
    const auto * v = o.if_contains(name);
    if (!v || v->is_null()) return fallback;
    if (!v->is_bool()) return fail(name, ": expected true or false");
    return v->get_bool();
}

}  // namespace hearth::daemon::http_fields
