#include "daemon/bench/edit_trace.h"

#include <algorithm>
#include <sstream>

#include <boost/json.hpp>

namespace hearth::daemon {

result<size_t> trace_offset(const std::string & text, int64_t line, int64_t col) {
    if (line < 0 || col < 0) return fail("position ", line, ":", col, " is negative");
    size_t off = 0;
    for (int64_t l = 0; l < line; ++l) {
        const auto nl = text.find('\n', off);
        if (nl == std::string::npos) return fail("line ", line, " is past the end of the document");
        off = nl + 1;
    }
    const size_t eol = std::min(text.find('\n', off), text.size());
    if (static_cast<size_t>(col) > eol - off) return fail("column ", col, " is past the end of line ", line);
    return off + static_cast<size_t>(col);
}

result<size_t> apply_trace_edit(std::string & text, const trace_event & e) {
    auto a = trace_offset(text, e.start_line, e.start_col);
    if (!a) return a.error();
    auto b = trace_offset(text, e.end_line, e.end_col);
    if (!b) return b.error();
    if (*b < *a) return fail("edit range ends before it starts");
    text.replace(*a, *b - *a, e.text);
    return *a + e.text.size();
}

result<std::vector<trace_event>> parse_trace(const std::string & jsonl) {
    std::vector<trace_event> out;
    std::istringstream in(jsonl);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        boost::system::error_code ec;
        auto v = boost::json::parse(line, ec);
        if (ec || !v.is_object()) return fail("trace line ", n, ": not a JSON object");
        const auto & o = v.as_object();
        auto str = [&](const char * k) -> result<std::string> {
            const auto * x = o.if_contains(k);
            if (!x || !x->is_string()) return fail("trace line ", n, ": '", k, "' must be a string");
            return std::string(x->as_string());
        };
        auto num = [&](const boost::json::value * x, const char * k) -> result<int64_t> {
            if (!x || !x->is_int64()) return fail("trace line ", n, ": '", k, "' must be an integer");
            return x->as_int64();
        };
        auto pos = [&](const char * k, int64_t & l, int64_t & c) -> status {
            const auto * x = o.if_contains(k);
            if (!x || !x->is_array() || x->as_array().size() != 2) return fail("trace line ", n, ": '", k, "' must be [line, col]");
            auto a = num(&x->as_array()[0], k);
            if (!a) return a.error();
            auto b = num(&x->as_array()[1], k);
            if (!b) return b.error();
            l = *a;
            c = *b;
            return {};
        };
        trace_event e;
        auto op = str("op");
        if (!op) return op.error();
        auto uri = str("uri");
        if (!uri) return uri.error();
        e.uri = *uri;
        if (*op == "open") {
            e.op = trace_event::kind::open;
            auto t = str("text");
            if (!t) return t.error();
            e.text = *t;
        } else if (*op == "edit") {
            e.op = trace_event::kind::edit;
            auto t = str("text");
            if (!t) return t.error();
            e.text = *t;
            if (auto s = pos("start", e.start_line, e.start_col); !s) return s.error();
            if (auto s = pos("end", e.end_line, e.end_col); !s) return s.error();
        } else if (*op == "complete") {
            e.op = trace_event::kind::complete;
            if (o.contains("line") || o.contains("col")) {
                auto l = num(o.if_contains("line"), "line");
                if (!l) return l.error();
                auto c = num(o.if_contains("col"), "col");
                if (!c) return c.error();
                if (*l < 0 || *c < 0) return fail("trace line ", n, ": line and col must not be negative");
                e.line = *l;
                e.col = *c;
            }
        } else if (*op == "type") {
            e.op = trace_event::kind::type;
            auto t = str("text");
            if (!t) return t.error();
            e.text = *t;
        } else if (*op == "type_suggestion") {
            e.op = trace_event::kind::type_suggestion;
            auto k = num(o.if_contains("chars"), "chars");
            if (!k) return k.error();
            if (*k < 1) return fail("trace line ", n, ": 'chars' must be at least 1");
            e.chars = *k;
        } else if (*op == "accept") {
            e.op = trace_event::kind::accept;
        } else {
            return fail("trace line ", n, ": op '", *op, "' is not open, edit, complete, type, type_suggestion or accept");
        }
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace hearth::daemon
