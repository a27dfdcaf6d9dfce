// Internal to lsp/types*.cpp: readers that validate a JSON value field by field and throw
// field_error with the path of the offending field; writers' small helpers.
// Thread-safety: stateless functions.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "lsp/types.h"

namespace hearth::lsp::detail {

// ---- readers: every failure throws field_error with a path relative to the value read.

inline const char * kind_name(const json::value & v) {
    switch (v.kind()) {
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

[[noreturn]] inline void expected(const char * what, const json::value & v) {
    throw field_error("", std::string("expected ") + what + ", got " + kind_name(v));
}

inline std::string join(std::string_view key, const std::string & sub) {
    if (sub.empty()) return std::string(key);
    if (sub.front() == '[') return std::string(key) + sub;
    return std::string(key) + "." + sub;
}

inline int64_t read_integer(const json::value & v, int64_t lo, int64_t hi, const char * what) {
    int64_t n = 0;
    if (v.is_int64()) {
        n = v.get_int64();
    } else if (v.is_uint64() && v.get_uint64() <= static_cast<uint64_t>(hi)) {
        n = static_cast<int64_t>(v.get_uint64());
    } else if (v.is_uint64()) {
        throw field_error("", std::string("expected ") + what + ", got an integer out of range");
    } else {
        expected(what, v);
    }
    if (n < lo || n > hi) throw field_error("", std::string("expected ") + what + ", got " + std::to_string(n));
    return n;
}

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

template <class T>
T read_value(const json::value & v) {
    if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string()) expected("string", v);
        return std::string(v.get_string());
    } else if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_bool()) expected("boolean", v);
        return v.get_bool();
    } else if constexpr (std::is_same_v<T, int32_t>) {
        return static_cast<int32_t>(read_integer(v, std::numeric_limits<int32_t>::min(),
                                                 std::numeric_limits<int32_t>::max(), "integer"));
    } else if constexpr (std::is_same_v<T, uint32_t>) {
        // The spec's uinteger is 0 .. 2^31 - 1.
        return static_cast<uint32_t>(read_integer(v, 0, std::numeric_limits<int32_t>::max(), "unsigned integer"));
    } else if constexpr (std::is_same_v<T, int64_t>) {
        return read_integer(v, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), "integer");
    } else if constexpr (std::is_same_v<T, json::array>) {
        if (!v.is_array()) expected("array", v);
        return v.get_array();
    } else if constexpr (is_vector<T>::value) {
        if (!v.is_array()) expected("array", v);
        T out;
        const json::array & a = v.get_array();
        out.reserve(a.size());
        for (size_t i = 0; i < a.size(); ++i) {
            try {
                out.push_back(read_value<typename T::value_type>(a[i]));
            } catch (const field_error & e) {
                throw field_error(join("[" + std::to_string(i) + "]", e.path), e.what());
            }
        }
        return out;
    } else {
        if (!v.is_object()) expected("object", v);
        return json::value_to<T>(v);
    }
}

inline const json::object & object_of(const json::value & v) {
    if (!v.is_object()) expected("object", v);
    return v.get_object();
}

template <class T>
T field(const json::object & o, std::string_view key) {
    const json::value * v = o.if_contains(key);
    if (!v) throw field_error(std::string(key), "missing required field");
    try {
        return read_value<T>(*v);
    } catch (const field_error & e) {
        throw field_error(join(key, e.path), e.what());
    }
}

template <class T>
std::optional<T> optional_field(const json::object & o, std::string_view key) {
    const json::value * v = o.if_contains(key);
    if (!v || v->is_null()) return std::nullopt;
    return field<T>(o, key);
}

// A progress token: integer or string.
inline std::optional<json::value> optional_token(const json::object & o, std::string_view key) {
    const json::value * v = o.if_contains(key);
    if (!v || v->is_null()) return std::nullopt;
    if (!v->is_int64() && !v->is_uint64() && !v->is_string()) {
        throw field_error(std::string(key), std::string("expected integer or string, got ") + kind_name(*v));
    }
    return *v;
}

// ---- writers

inline void put_optional_range(json::object & o, std::string_view key, const std::optional<range> & r) {
    if (r) o[key] = json::value_from(*r);
}

}  // namespace hearth::lsp::detail
