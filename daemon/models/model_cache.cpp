#include "daemon/models/model_cache.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/default_model.h"
#include "daemon/models/sha256.h"

namespace hearth::daemon {
namespace {

namespace fs = std::filesystem;

result<fs::path> cache_root() {
    fs::path root = hearth_cache_dir();
    if (root.empty()) return fail("the model cache: neither XDG_CACHE_HOME nor HOME is set");
    return root;
}

constexpr const char * k_default_link = k_default_model_file;   // base/default_model.h

}  // namespace

result<std::string> model_cache_dir() {
    auto root = cache_root();
    if (!root) return root.error();
    return (*root / "models").string();
}

result<std::string> download_cache_dir() {
    auto root = cache_root();
    if (!root) return root.error();
    return (*root / "downloads").string();
}

status check_model_name(const std::string & name) {
    if (name.empty() || name.front() == '.' || name.find('/') != std::string::npos || name == "default" ||
        name.find('\0') != std::string::npos)
        return fail("'", name, "' is not a model name (a plain file name, not starting with '.', not 'default')");
    return {};
}

std::string read_verified_stamp(const std::string & model_path) {
    std::ifstream in(model_path + ".verified");
    std::string sha;
    if (!(in >> sha) || !is_sha256_hex(sha)) return {};
    return sha;
}

status write_verified_stamp(const std::string & model_path, const std::string & sha256_hex) {
    const std::string stamp = model_path + ".verified", tmp = stamp + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << sha256_hex << "\n";
        if (!out) return fail("cannot write ", tmp);
    }
    std::error_code ec;
    fs::rename(tmp, stamp, ec);
    if (ec) return fail("cannot write ", stamp, ": ", ec.message());
    return {};
}

bool has_default_model() {
    auto dir = model_cache_dir();
    std::error_code ec;
    return dir && fs::exists(fs::path(*dir) / k_default_link, ec);
}

result<std::vector<cached_model>> list_cached_models() {
    auto dir = model_cache_dir();
    if (!dir) return dir.error();
    std::vector<cached_model> out;
    std::error_code ec;
    if (!fs::is_directory(*dir, ec)) return out;
    const fs::path link = fs::path(*dir) / k_default_link;
    std::string default_target;
    if (fs::is_symlink(link, ec)) default_target = fs::read_symlink(link, ec).filename().string();
    for (const auto & e : fs::directory_iterator(*dir, ec)) {
        const std::string file = e.path().filename().string();
        if (file.front() == '.' || e.path().extension() != ".gguf" || !e.is_regular_file(ec)) continue;
        if (file == k_default_link && e.is_symlink(ec)) continue;   // the link, not a model
        cached_model m;
        m.name = e.path().stem().string();
        m.path = e.path().string();
        m.size_bytes = e.file_size(ec);
        m.verified_sha256 = read_verified_stamp(m.path);
        m.is_default = file == default_target || (file == k_default_link);   // a copied-in default file
        out.push_back(std::move(m));
    }
    std::sort(out.begin(), out.end(), [](const cached_model & a, const cached_model & b) { return a.name < b.name; });
    return out;
}

namespace {

// The file of the cached model `name`, or why there is none (a bad name, no cache, no such model).
result<fs::path> cached_model_file(const std::string & name) {
    if (auto s = check_model_name(name); !s) return s.error();
    auto dir = model_cache_dir();
    if (!dir) return dir.error();
    const fs::path target = fs::path(*dir) / (name + ".gguf");
    std::error_code ec;
    if (!fs::is_regular_file(target, ec)) return fail("no model '", name, "' in ", *dir, " (hearth models lists them)");
    return target;
}

}  // namespace

status set_default_model(const std::string & name) {
    auto found = cached_model_file(name);
    if (!found) return found.error();
    const fs::path dir = found->parent_path(), link = dir / k_default_link;
    std::error_code ec;
    if (fs::exists(link, ec) && !fs::is_symlink(link, ec))
        return fail(link.string(), " is a file, not the link to the default model; move it away");
    const fs::path tmp = dir / ".default.gguf.link";
    fs::remove(tmp, ec);
    fs::create_symlink(name + ".gguf", tmp, ec);   // relative: the folder may move
    if (ec) return fail("cannot create ", tmp.string(), ": ", ec.message());
    fs::rename(tmp, link, ec);
    if (ec) return fail("cannot replace ", link.string(), ": ", ec.message());
    return {};
}

status remove_cached_model(const std::string & name) {
    auto found = cached_model_file(name);
    if (!found) return found.error();
    const fs::path target = *found, link = target.parent_path() / k_default_link;
    std::error_code ec;
    if (fs::is_symlink(link, ec) && fs::read_symlink(link, ec).filename() == target.filename()) fs::remove(link, ec);
    fs::remove(fs::path(target.string() + ".verified"), ec);
    if (!fs::remove(target, ec) || ec) return fail("cannot remove ", target.string(), ": ", ec.message());
    return {};
}

}  // namespace hearth::daemon
