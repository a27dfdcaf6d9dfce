// http_fields: reading a request body's optional fields, each with its default, and an error
// that names the field and says what was expected ("n_predict: expected an integer").
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

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

// The sampling and slot fields every completion endpoint receives (llama-server's and
// OpenAI's), validated alike on /infill, /completion, /v1/completions and /v1/chat/completions,
// so one value gets one answer everywhere. docs/http.md's field table says what each does here.
struct shared_fields {
    double temperature = 0;   // the chat samples with it; a FIM's first candidate is greedy
    int64_t seed = 42;
    int64_t id_slot = -1;
};

inline result<shared_fields> shared(const boost::json::object & o) {
    shared_fields f;
    auto fail_of = [](const auto & r) { return r ? std::string() : r.message(); };
    auto temperature = number(o, "temperature", 0, 0, 100);
    auto top_p = number(o, "top_p", 1, 0, 1);
    auto min_p = number(o, "min_p", 0, 0, 1);
    auto top_k = integer(o, "top_k", 0, -1, 1 << 20);
    auto seed = integer(o, "seed", 42, INT64_MIN, INT64_MAX);
    auto id_slot = integer(o, "id_slot", -1, -1, 1 << 20);
    // Context shift's and the samplers' floors: llama-server uses them only with --context-shift
    // and with sampling; hearth stops at the context and answers greedily. Checked, no effect.
    auto n_keep = integer(o, "n_keep", -1, -1, INT32_MAX);
    auto n_discard = integer(o, "n_discard", 0, 0, INT32_MAX);
    auto min_keep = integer(o, "min_keep", 0, 0, INT32_MAX);
    auto cache_prompt = boolean(o, "cache_prompt", true);
    for (const std::string & e : {fail_of(temperature), fail_of(top_p), fail_of(min_p), fail_of(top_k), fail_of(seed),
                                  fail_of(id_slot), fail_of(n_keep), fail_of(n_discard), fail_of(min_keep), fail_of(cache_prompt)})
        if (!e.empty()) return fail(e);
    // Per-token probabilities: the engine keeps no per-token record past cleanup, so a client
    // that asks for them is told so rather than answered without them.
    auto n_probs = integer(o, "n_probs", 0, 0, INT32_MAX);
    if (!n_probs) return n_probs.error();
    if (*n_probs > 0) return fail("n_probs: per-token probabilities are not supported");
    if (const auto * v = o.if_contains("logprobs"); v && !v->is_null() && !(v->is_bool() && !v->get_bool()) &&
                                                    !(v->is_int64() && v->get_int64() == 0))
        return fail("logprobs: per-token probabilities are not supported");
    if (const auto * v = o.if_contains("top_logprobs"); v && !v->is_null())
        return fail("top_logprobs: per-token probabilities are not supported");
    f.temperature = *temperature;
    f.seed = *seed;
    f.id_slot = *id_slot;
    return f;
}

// response_fields (llama-server's /completion and /infill): only the paths asked for, each a
// top-level key named by its whole path ("timings/prompt_n"); a path that is not there is left
// out ([""] gives {}). An empty or absent list keeps the whole object.
inline result<std::vector<std::string>> response_fields(const boost::json::object & o) {
    std::vector<std::string> out;
    const auto * v = o.if_contains("response_fields");
    if (!v || v->is_null()) return out;
    if (!v->is_array()) return fail("response_fields: expected an array of strings");
    for (const auto & p : v->get_array()) {
        if (!p.is_string()) return fail("response_fields: expected an array of strings");
        out.emplace_back(p.get_string());
    }
    return out;
}

inline boost::json::object select_fields(const boost::json::object & full, const std::vector<std::string> & paths) {
    if (paths.empty()) return full;
    const boost::json::value whole(full);
    boost::json::object out;
    for (const auto & path : paths) {
        // llama-server's "a/b" is the JSON Pointer "/a/b" (a '~' in a key escaped as the pointer wants).
        std::string pointer = "/";
        for (const char ch : path) pointer += ch == '~' ? std::string("~0") : std::string(1, ch);
        boost::system::error_code ec;
        if (const auto * at = whole.find_pointer(pointer, ec)) out[path] = *at;
    }
    return out;
}

}  // namespace hearth::daemon::http_fields
