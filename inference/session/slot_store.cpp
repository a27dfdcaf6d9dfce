#include "inference/session/slot_store.h"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/default_model.h"
#include "inference/cache/k_smoothing.h"

namespace hearth::inference {
namespace {

constexpr char k_magic[8] = {'H', 'E', 'A', 'R', 'T', 'H', 'K', 'V'};
constexpr uint64_t k_identity_bytes = 1 << 20;
constexpr const char * k_tmp_marker = ".tmp";   // <hash>.slot.tmp<pid of the writer>

std::string hex(const uint8_t * p, size_t n) {
    static const char d[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; ++i) s += d[p[i] >> 4], s += d[p[i] & 15];
    return s;
}

// Appends plain values to a byte buffer; the file is written in the host's byte order and
// the header's magic and shape checks reject a file from a host that differs.
struct writer {
    std::vector<uint8_t> buf;
    void bytes(const void * p, size_t n) {
        const auto * b = static_cast<const uint8_t *>(p);
        buf.insert(buf.end(), b, b + n);
    }
    template <class T> void put(T v) { bytes(&v, sizeof v); }
};

struct reader {
    const uint8_t * p;
    size_t n, off = 0;
    bool bytes(void * out, size_t k) {
        if (k > n - off) return false;
        std::memcpy(out, p + off, k);
        off += k;
        return true;
    }
    template <class T> bool get(T & v) { return bytes(&v, sizeof v); }
};

}  // namespace

std::string model_identity::hex() const { return inference::hex(bytes.data(), bytes.size()); }

result<model_identity> identify_model(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail("model identity: cannot read '", path, "'");
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (ec) return fail("model identity: cannot stat '", path, "': ", ec.message());
    std::vector<char> head(static_cast<size_t>(std::min<uint64_t>(size, k_identity_bytes)));
    if (!in.read(head.data(), static_cast<std::streamsize>(head.size())))
        return fail("model identity: '", path, "' ended before ", head.size(), " bytes");
    XXH3_state_t * st = XXH3_createState();
    XXH3_128bits_reset(st);
    XXH3_128bits_update(st, head.data(), head.size());
    XXH3_128bits_update(st, &size, sizeof size);
    const XXH128_hash_t h = XXH3_128bits_digest(st);
    XXH3_freeState(st);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    model_identity id;
    std::memcpy(id.bytes.data(), c.digest, id.bytes.size());
    return id;
}

result<std::string> default_slot_dir() {
    const auto root = hearth_cache_dir();
    if (root.empty()) return fail("slot directory: neither XDG_CACHE_HOME nor HOME is set");
    return (root / "slots").string();
}

slot_store::slot_store(const std::string & root, const model_identity & model) : dir_(root + "/" + model.hex()), model_(model) {
    remove_stale_temporaries();
}

std::string slot_store::path_for(const std::string & key) const {
    XXH64_canonical_t c;
    XXH64_canonicalFromHash(&c, XXH3_64bits(key.data(), key.size()));
    return dir_ + "/" + hex(c.digest, sizeof c.digest) + ".slot";
}

bool slot_store::has(const std::string & key) const {
    struct stat st {};
    return ::lstat(path_for(key).c_str(), &st) == 0;   // a link or a FIFO too: load() refuses it, the owner removes it
}

void slot_store::remove(const std::string & key) const { ::unlink(path_for(key).c_str()); }

int slot_store::remove_stale_temporaries() const {
    namespace fs = std::filesystem;
    int removed = 0;
    std::error_code ec;
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const size_t at = name.rfind(k_tmp_marker);
        if (at == std::string::npos) continue;
        const std::string digits = name.substr(at + std::strlen(k_tmp_marker));
        if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
        const auto pid = static_cast<pid_t>(std::stol(digits));
        // Ours cannot be in progress yet (a store is made before any save); another pid's
        // writer is gone when kill() finds no such process (EPERM: it exists, as another user).
        const bool writer_gone = pid == ::getpid() || (::kill(pid, 0) != 0 && errno == ESRCH);
        if (writer_gone && ::unlink(it->path().c_str()) == 0) ++removed;
    }
    return removed;
}

namespace {

// What one entry of the slot folder costs on disk, whatever it is: a file its size, a
// directory everything under it; links are not followed.
uint64_t entry_bytes(const std::filesystem::path & p, const struct stat & st) {
    if (!S_ISDIR(st.st_mode)) return static_cast<uint64_t>(st.st_size);
    uint64_t total = 0;
    std::error_code ec;
    for (std::filesystem::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
        struct stat sub {};
        if (::lstat(it->path().c_str(), &sub) == 0 && !S_ISDIR(sub.st_mode)) total += static_cast<uint64_t>(sub.st_size);
    }
    return total;
}

}  // namespace

int slot_store::prune(uint64_t max_bytes) const {
    namespace fs = std::filesystem;
    struct entry {
        fs::path path;
        timespec written;
        uint64_t bytes;
    };
    // Everything in the folder counts: slots, temporaries, whatever else landed there.
    std::vector<entry> entries;
    uint64_t total = 0;
    std::error_code ec;
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0) continue;
        entries.push_back({it->path(), st.st_mtim, entry_bytes(it->path(), st)});
        total += entries.back().bytes;
    }
    std::sort(entries.begin(), entries.end(), [](const entry & a, const entry & b) {
        return a.written.tv_sec != b.written.tv_sec ? a.written.tv_sec < b.written.tv_sec : a.written.tv_nsec < b.written.tv_nsec;
    });
    int removed = 0;
    for (const auto & e : entries) {
        if (total <= max_bytes) break;
        if (fs::remove_all(e.path, ec) > 0 && !ec) ++removed, total -= e.bytes;
    }
    return removed;
}

namespace {

bool write_fully(int fd, const uint8_t * p, size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

// Reads n bytes at `offset`; false at the end of the file or on an error.
bool read_fully(int fd, uint8_t * p, size_t n, uint64_t offset) {
    while (n > 0) {
        const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= static_cast<size_t>(r);
        offset += static_cast<uint64_t>(r);
    }
    return true;
}

// The header's word for the K type: the type, and in its high half the rule of the scales its
// rows are divided by where the cache stores smoothed keys (k_smoothing.h). An unsmoothed cache
// writes the type alone, as version 2 always did; a smoothed slot never loads into a cache that
// reads its rows as plain keys, nor one smoothed by another rule, and the other way round.
uint32_t k_type_word(const kv_cache & c) {
    return static_cast<uint32_t>(c.types().k) | (c.k_smoothed() ? k_smoothing::k_rule << 16 : 0u);
}

// A slot file's fixed header, up to and including the key length: magic, version, model id, K and
// V types, layers, width, K and V row bytes, key length.
constexpr size_t k_fixed_header_bytes = sizeof k_magic + 4 + 16 + 4 + 4 + 4 + 4 + 8 + 8 + 4;

}  // namespace

status slot_store::save(const std::string & key, const sequence & seq) {
    const kv_cache & c = seq.cache;
    if (static_cast<size_t>(c.n_pos()) != seq.tokens.size())
        return fail("slot store: the sequence holds ", seq.tokens.size(), " tokens but ", c.n_pos(), " cache positions");
    // Only what prefill computed: decode steps' positions would be re-evaluated anyway.
    const int32_t n = std::min(seq.n_batch_rows, c.n_pos());
    writer w;
    w.bytes(k_magic, sizeof k_magic);
    w.put<uint32_t>(k_version);
    w.bytes(model_.bytes.data(), model_.bytes.size());
    w.put<uint32_t>(k_type_word(c));
    w.put<uint32_t>(static_cast<uint32_t>(c.types().v));
    w.put<uint32_t>(static_cast<uint32_t>(c.n_layer()));
    w.put<uint32_t>(static_cast<uint32_t>(c.n_embd_kv()));
    w.put<uint64_t>(c.row_bytes(kv_half::k));
    w.put<uint64_t>(c.row_bytes(kv_half::v));
    w.put<uint32_t>(static_cast<uint32_t>(key.size()));
    w.bytes(key.data(), key.size());
    w.put<uint32_t>(static_cast<uint32_t>(n));
    w.bytes(seq.tokens.data(), static_cast<size_t>(n) * sizeof(token_id));
    std::vector<uint8_t> rows;   // wherever they live (a device's layers too)
    for (int32_t il = 0; il < c.n_layer(); ++il) {
        for (kv_half h : {kv_half::k, kv_half::v}) {
            rows.resize(static_cast<size_t>(n) * c.row_bytes(h));
            if (n > 0)
                if (status s = c.read_rows(il, h, 0, n, rows.data()); !s) return fail("slot store: ", s.message());
            w.bytes(rows.data(), rows.size());
        }
    }
    w.put<uint64_t>(XXH3_64bits(w.buf.data(), w.buf.size()));

    // The files hold the user's tokens: private to the user, like the folder.
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) return fail("slot store: cannot create '", dir_, "': ", ec.message());
    ::chmod(dir_.c_str(), 0700);
    const std::string path = path_for(key);
    const std::string tmp = path + k_tmp_marker + std::to_string(::getpid());
    // A new file, never whatever sits at that name (a link, a FIFO a writer would block on).
    ::unlink(tmp.c_str());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return fail("slot store: cannot create '", tmp, "': ", std::strerror(errno));
    const bool written = write_fully(fd, w.buf.data(), w.buf.size());
    const int err = errno;
    if (::close(fd) != 0 || !written) {
        ::unlink(tmp.c_str());
        return fail("slot store: cannot write '", tmp, "': ", std::strerror(written ? errno : err));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        return fail("slot store: cannot rename '", tmp, "' to '", path, "': ", std::strerror(e));
    }
    return {};
}

result<bool> slot_store::load(const std::string & key, sequence & seq, int32_t max_positions) const {
    const std::string path = path_for(key);
    // Never follows a link (to /dev/zero, to another user's file) and never waits for a
    // FIFO's writer: either is refused below, at once.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return false;
        if (errno == ELOOP) return fail("slot file '", path, "': a symbolic link (slot files are never followed)");
        return fail("slot file '", path, "': cannot open: ", std::strerror(errno));
    }
    auto s = read_slot_file(fd, path, key, model_, seq, max_positions);
    ::close(fd);
    if (!s) return s.error();
    return true;
}

status read_slot_file(int fd, const std::string & name, const std::string & key, const model_identity & model, sequence & seq,
                      int32_t max_positions) {
    auto bad = [&](auto... why) -> error { return fail("slot file '", name, "': ", why...); };
    struct stat st {};
    if (::fstat(fd, &st) != 0) return bad("cannot stat: ", std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return bad("not a regular file");
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size < k_fixed_header_bytes + sizeof(uint32_t) + sizeof(uint64_t)) return bad("only ", size, " bytes, too short for a slot");

    // The header first: it says how long the file must be, and nothing more is read unless it is.
    uint8_t fixed[k_fixed_header_bytes];
    if (!read_fully(fd, fixed, sizeof fixed, 0)) return bad("cannot read the header");
    reader r{fixed, sizeof fixed};
    char magic[8];
    if (!r.bytes(magic, sizeof magic) || std::memcmp(magic, k_magic, sizeof magic) != 0) return bad("not a slot file (magic)");
    uint32_t version = 0;
    if (!r.get(version) || version != slot_store::k_version) return bad("version ", version, ", expected ", slot_store::k_version);
    model_identity id;
    if (!r.bytes(id.bytes.data(), id.bytes.size()) || !(id == model)) return bad("made for another model (", id.hex(), ")");
    const kv_cache & c = seq.cache;
    uint32_t k_type = 0, v_type = 0, n_layer = 0, n_embd_kv = 0, key_len = 0, n = 0;
    uint64_t k_row_bytes = 0, v_row_bytes = 0;
    if (!r.get(k_type) || !r.get(v_type) || !r.get(n_layer) || !r.get(n_embd_kv) || !r.get(k_row_bytes) || !r.get(v_row_bytes))
        return bad("truncated header");
    if (k_type != k_type_word(c) || v_type != static_cast<uint32_t>(c.types().v) ||
        n_layer != static_cast<uint32_t>(c.n_layer()) || n_embd_kv != static_cast<uint32_t>(c.n_embd_kv()) ||
        k_row_bytes != c.row_bytes(kv_half::k) || v_row_bytes != c.row_bytes(kv_half::v))
        return bad("cache shape (types ", k_type, "/", v_type, ", ", n_layer, " layers, ", n_embd_kv, " wide, ", k_row_bytes,
                   "/", v_row_bytes, "-byte rows) differs from this cache's (types ", k_type_word(c), "/",
                   static_cast<uint32_t>(c.types().v), ", ", c.n_layer(), " layers, ", c.n_embd_kv(), " wide, ",
                   c.row_bytes(kv_half::k), "/", c.row_bytes(kv_half::v), "-byte rows)");
    if (!r.get(key_len)) return bad("truncated header");
    if (key_len != key.size()) return bad("holds another key (", key_len, " bytes long)");
    const uint64_t key_at = k_fixed_header_bytes;
    if (size < key_at + key_len + sizeof(uint32_t) + sizeof(uint64_t)) return bad("truncated key");
    std::string stored_key(key_len, '\0');
    if (!read_fully(fd, reinterpret_cast<uint8_t *>(stored_key.data()), key_len, key_at) || stored_key != key)
        return bad("holds another key");
    if (!read_fully(fd, reinterpret_cast<uint8_t *>(&n), sizeof n, key_at + key_len)) return bad("truncated token count");
    if (n > static_cast<uint32_t>(c.n_ctx())) return bad(n, " positions, more than the context of ", c.n_ctx());
    const uint64_t tokens_at = key_at + key_len + sizeof n;
    const uint64_t body = tokens_at + uint64_t{n} * sizeof(token_id) + uint64_t{n_layer} * n * (k_row_bytes + v_row_bytes);
    if (size != body + sizeof(uint64_t)) return bad(size, " bytes, expected ", body + sizeof(uint64_t), " for ", n, " positions");

    // Exactly the size the header implies: at most one slot of this cache.
    std::vector<uint8_t> buf(body + sizeof(uint64_t));
    if (!read_fully(fd, buf.data(), buf.size(), 0)) return bad("changed while it was read (shorter than ", buf.size(), " bytes)");
    uint64_t sum = 0;
    std::memcpy(&sum, buf.data() + body, sizeof sum);
    if (sum != XXH3_64bits(buf.data(), body)) return bad("checksum mismatch (the file is corrupted)");

    std::vector<token_id> tokens(n);
    if (n > 0) std::memcpy(tokens.data(), buf.data() + tokens_at, tokens.size() * sizeof(token_id));   // an empty vector's data() may be null
    const auto keep = static_cast<int32_t>(std::min<int64_t>(n, std::max(0, max_positions)));
    const size_t k_layer_bytes = static_cast<size_t>(n) * k_row_bytes, v_layer_bytes = static_cast<size_t>(n) * v_row_bytes;
    const uint8_t * rows = buf.data() + tokens_at + tokens.size() * sizeof(token_id);
    seq.cache.clear();
    if (keep > 0) seq.cache.reserve(keep);
    for (int32_t il = 0; il < c.n_layer() && keep > 0; ++il) {
        const uint8_t * k = rows + static_cast<size_t>(il) * (k_layer_bytes + v_layer_bytes);
        if (status s = seq.cache.write_rows(il, kv_half::k, 0, keep, k); !s) return bad(s.message());
        if (status s = seq.cache.write_rows(il, kv_half::v, 0, keep, k + k_layer_bytes); !s) return bad(s.message());
    }
    seq.cache.set_n_pos(keep);
    tokens.resize(static_cast<size_t>(keep));
    seq.tokens = std::move(tokens);
    seq.n_batch_rows = keep;   // save() writes prefill positions only
    return {};
}

}  // namespace hearth::inference
