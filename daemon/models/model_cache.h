// model_cache: the folder of downloaded models, ${XDG_CACHE_HOME:-~/.cache}/hearth/models/,
// laid out as scripts/fetch-model leaves it, so both tools share it:
//   <name>.gguf            a model, only ever renamed into place complete and validated
//   <name>.gguf.verified   its SHA-256 (hex), written after the whole file matched a known hash
//   default.gguf           a relative link to the default model (what commands open when no
//                          model is named)
//   .<name>.gguf.partial   a join in progress (hidden, never listed)
// and ${XDG_CACHE_HOME:-~/.cache}/hearth/downloads/ for resumable downloads.
// Thread-safety: free functions over the file system; two processes pulling the same name
// at once are not serialised (the later rename wins; both files were complete).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace hearth::daemon {

struct cached_model {
    std::string name;          // file name without .gguf
    std::string path;
    uint64_t size_bytes = 0;
    std::string verified_sha256;   // from the stamp; "" when never verified
    bool is_default = false;
};

result<std::string> model_cache_dir();      // .../hearth/models
result<std::string> download_cache_dir();   // .../hearth/downloads

// A model name is a plain file name: no '/', not starting with '.', not "default".
status check_model_name(const std::string & name);

result<std::vector<cached_model>> list_cached_models();   // by name
// default.gguf -> <name>.gguf, replaced atomically; the model must be in the cache.
status set_default_model(const std::string & name);
// Removes <name>.gguf and its stamp, and default.gguf when it pointed there.
status remove_cached_model(const std::string & name);
status write_verified_stamp(const std::string & model_path, const std::string & sha256_hex);
std::string read_verified_stamp(const std::string & model_path);   // "" when absent or malformed
bool has_default_model();

}  // namespace hearth::daemon
