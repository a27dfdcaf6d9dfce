// slot_store: KV slots on disk, so a file opened again after a daemon restart (or after its
// slot was evicted) starts warm. One directory per model, named by the model's identity
// (XXH3-128 of its first MiB and its size), one file per key (XXH3-64 of the key):
//   ${XDG_CACHE_HOME:-~/.cache}/hearth/slots/<model id>/<key hash>.slot
// A file holds a header (magic, version, model id, K and V types and the shape, the key, the token
// count; the K type's word also names the rule of smoothed K rows' scales, k_smoothing.h), the
// tokens, each layer's K and V rows for those positions, and an XXH3-64 checksum of everything
// before it. load() trusts nothing: a wrong magic, version, model, shape or
// key, a short or long file, or a checksum mismatch is an error that says which, and the
// sequence is left untouched. It never follows a symbolic link, never waits on a FIFO
// (opened non-blocking, then anything but a regular file is refused), and reads only after
// the header's shape and count say how long the file must be and the file is exactly that
// long: one slot of this cache at most, whatever sits on disk. Files are written (mode 0600,
// the folder 0700: they hold the user's tokens) to <hash>.slot.tmp<pid> and renamed, so a
// crash mid-write never leaves a torn slot under the real name; a temporary whose writer is
// gone (SIGKILL mid-save) is removed when a store opens the folder.
// Thread-safety: none; one owner (the compute worker). Distinct daemons for the same model
// may share the directory: the rename makes each file all-or-nothing.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "base/result.h"
#include "inference/session/sequence.h"

namespace hearth::inference {

struct model_identity {
    std::array<uint8_t, 16> bytes{};
    std::string hex() const;
    bool operator==(const model_identity &) const = default;
};

// Reads the first MiB of the model file and its size; the error names the path.
result<model_identity> identify_model(const std::string & path);

// ${XDG_CACHE_HOME:-$HOME/.cache}/hearth/slots; an error when neither variable is set.
result<std::string> default_slot_dir();

class slot_store {
public:
    static constexpr uint32_t k_version = 2;   // 2: K and V types and row sizes apart

    // Files go under root/<model id hex>/; the directory is made on the first save.
    slot_store(const std::string & root, const model_identity & model);

    const std::string & dir() const { return dir_; }
    std::string path_for(const std::string & key) const;

    // Writes the positions a prefill computed (sequence::n_batch_rows, with their tokens) for `key`.
    status save(const std::string & key, const sequence & seq);
    // Whether a file for `key` exists.
    bool has(const std::string & key) const;
    // Reads the slot for `key` into `seq` (its cache type and shape must match the file's)
    // keeping at most max_positions positions; false when there is no file. Errors: the
    // file is rejected (the reason says which check failed); `seq` is not changed then.
    result<bool> load(const std::string & key, sequence & seq, int32_t max_positions) const;
    void remove(const std::string & key) const;
    // Deletes the least recently written entries of this model's folder until the rest take
    // at most max_bytes; returns how many were deleted. Everything there counts (slots,
    // temporaries, anything else); other models' folders are not touched.
    int prune(uint64_t max_bytes) const;
    // Removes <hash>.slot.tmp<pid> files whose writer is no longer running (or is this
    // process, which has not started one yet); the constructor does it. Returns how many.
    int remove_stale_temporaries() const;

private:
    std::string dir_;
    model_identity model_;
};

// load()'s checks and read on an open file descriptor (`name` for the messages): fstat must
// say a regular file exactly as long as its header implies; then the whole file is read and
// checked, and only then is `seq` changed. Exposed for the fuzz target.
status read_slot_file(int fd, const std::string & name, const std::string & key, const model_identity & model, sequence & seq,
                      int32_t max_positions);

}  // namespace hearth::inference
