// http_download: one HTTP(S) GET into a partial file with libcurl, resumable. The bytes
// already in the partial file are kept and the rest asked for with a Range request; a
// server that ignores the Range (200 instead of 206) gets the file from the start. A
// transfer that moves no byte for `stall_timeout_s` seconds is abandoned (the error says
// so, and the partial file stays for the next try). Redirects are followed (Hugging Face
// answers with one to its CDN). The SHA-256 a server publishes for the file
// (X-Linked-ETag from Hugging Face, x-amz-meta-sha256 from S3, X-Checksum-Sha256) is
// reported for the caller to check.
// Thread-safety: one call per thread; no shared state except curl's global init (once).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace hearth::daemon {

struct download_request {
    std::string url;
    std::string partial_path;        // appended to; created when missing
    uint32_t stall_timeout_s = 30;   // no byte for this long: give up
    uint32_t connect_timeout_s = 30;
    std::vector<std::string> headers;   // extra request headers ("Accept: ...")
    // (bytes in the partial file so far, the whole file's size when the server said it)
    std::function<void(uint64_t, std::optional<uint64_t>)> on_progress;
};

struct download_result {
    uint64_t size_bytes = 0;            // of the complete file
    uint64_t resumed_from = 0;          // bytes that were already there and kept
    std::string published_sha256;       // lowercase hex; "" when the server published none
    std::string content_type;
};

result<download_result> http_download(const download_request & req);

// A small GET into memory (an index page); the same timeouts and redirects.
result<std::string> http_get_text(const std::string & url, const std::vector<std::string> & headers,
                                  uint32_t stall_timeout_s = 30);

}  // namespace hearth::daemon
