// result<T>: a value or an error with a message, returned by the public functions of
// inference/ and lsp/ so that exceptions never cross a layer boundary.
// An error message says what was wrong, where (offset, field, line) and what was expected.
// Thread-safety: a plain value type.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace hearth {

struct error {
    std::string message;
};

// Builds an error; `return fail("tensor '", name, "': offset ", off, " past end");`
template <class... Parts>
error fail(Parts &&... parts) {
    std::string s;
    auto append = [&s](const auto & p) {
        if constexpr (std::is_arithmetic_v<std::decay_t<decltype(p)>> && !std::is_same_v<std::decay_t<decltype(p)>, char>)
            s += std::to_string(p);
        else
            s += p;
    };
    (append(parts), ...);
    return error{std::move(s)};
}

template <class T>
class [[nodiscard]] result {
public:
    result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    result(hearth::error e) : v_(std::in_place_index<1>, std::move(e)) {}

    bool has_value() const { return v_.index() == 0; }
    explicit operator bool() const { return has_value(); }

    T & value() & { assert(has_value()); return std::get<0>(v_); }
    const T & value() const & { assert(has_value()); return std::get<0>(v_); }
    T && value() && { assert(has_value()); return std::get<0>(std::move(v_)); }
    T & operator*() & { return value(); }
    const T & operator*() const & { return value(); }
    T && operator*() && { return std::move(*this).value(); }
    T * operator->() { return &value(); }
    const T * operator->() const { return &value(); }

    const hearth::error & error() const { assert(!has_value()); return std::get<1>(v_); }
    const std::string & message() const { return error().message; }

private:
    std::variant<T, hearth::error> v_;
};

template <>
class [[nodiscard]] result<void> {
public:
    result() = default;
    result(hearth::error e) : e_(std::move(e)) {}

    bool has_value() const { return !e_; }
    explicit operator bool() const { return has_value(); }
    const hearth::error & error() const { assert(e_); return *e_; }
    const std::string & message() const { return error().message; }

private:
    std::optional<hearth::error> e_;
};

using status = result<void>;

}  // namespace hearth
