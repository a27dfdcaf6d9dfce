#include "daemon/models/http_download.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "daemon/models/sha256.h"

namespace hearth::daemon {
namespace {

struct curl_deleter {
    void operator()(CURL * c) const { curl_easy_cleanup(c); }
};
struct slist_deleter {
    void operator()(curl_slist * s) const { curl_slist_free_all(s); }
};

std::string lower(std::string s) {
    for (char & c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string trim(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    return s.substr(i);
}

// What the headers of the responses said; each new status line (a redirect's, then the
// final one's) starts a response, but a published hash seen on a redirect is kept.
struct response_headers {
    long status = 0;
    std::optional<uint64_t> content_length;
    std::optional<uint64_t> range_start, range_total;   // Content-Range: bytes START-END/TOTAL (or */TOTAL)
    std::string published_sha256;
    std::string content_type;
};

void parse_header_line(const std::string & raw, response_headers & h) {
    const std::string line = trim(raw);
    if (line.rfind("HTTP/", 0) == 0) {
        const std::string sha = h.published_sha256;
        h = {};
        h.published_sha256 = sha;
        const size_t sp = line.find(' ');
        if (sp != std::string::npos) h.status = std::strtol(line.c_str() + sp + 1, nullptr, 10);
        return;
    }
    const size_t colon = line.find(':');
    if (colon == std::string::npos) return;
    const std::string name = lower(line.substr(0, colon));
    std::string value = trim(line.substr(colon + 1));
    if (name == "content-length") {
        h.content_length = std::strtoull(value.c_str(), nullptr, 10);
    } else if (name == "content-range") {
        // "bytes 100-199/1234" or "bytes */1234"
        const size_t slash = value.find('/');
        if (slash != std::string::npos && value.compare(slash + 1, 1, "*") != 0)
            h.range_total = std::strtoull(value.c_str() + slash + 1, nullptr, 10);
        const size_t sp = value.find(' ');
        if (sp != std::string::npos && sp + 1 < value.size() && std::isdigit(static_cast<unsigned char>(value[sp + 1])))
            h.range_start = std::strtoull(value.c_str() + sp + 1, nullptr, 10);
    } else if (name == "x-linked-etag" || name == "x-amz-meta-sha256" || name == "x-checksum-sha256") {
        if (value.rfind("W/", 0) == 0) value = value.substr(2);
        value.erase(std::remove(value.begin(), value.end(), '"'), value.end());
        if (is_sha256_hex(value)) h.published_sha256 = lower(value);
    } else if (name == "content-type") {
        h.content_type = value;
    }
}

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::unique_ptr<CURL, curl_deleter> make_handle(const std::string & url, curl_slist * headers, uint32_t stall_s,
                                                uint32_t connect_s, char * errbuf) {
    global_init();
    std::unique_ptr<CURL, curl_deleter> c(curl_easy_init());
    if (!c) return c;
    CURL * h = c.get();
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(h, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, static_cast<long>(connect_s));
    // Less than 1 byte/s for stall_s seconds: the transfer is stalled.
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(stall_s));
    curl_easy_setopt(h, CURLOPT_USERAGENT, "hearth/" HEARTH_VERSION);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (headers) curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    return c;
}

std::unique_ptr<curl_slist, slist_deleter> header_list(const std::vector<std::string> & headers) {
    curl_slist * list = nullptr;
    for (const auto & hd : headers) list = curl_slist_append(list, hd.c_str());
    return std::unique_ptr<curl_slist, slist_deleter>(list);
}

size_t on_header(char * data, size_t size, size_t n, void * user) {
    parse_header_line(std::string(data, size * n), *static_cast<response_headers *>(user));
    return size * n;
}

// Why a transfer failed, in words a user can act on.
std::string describe_failure(CURLcode code, const char * errbuf, const std::string & url, const response_headers & h,
                             uint32_t stall_s) {
    if (code == CURLE_HTTP_RETURNED_ERROR) {
        std::string s = "HTTP " + std::to_string(h.status) + " from " + url;
        if (h.status == 404) s += " (not found: check the name, the revision and the file name)";
        else if (h.status == 401 || h.status == 403) s += " (not allowed: the file may be gated or private)";
        return s;
    }
    if (code == CURLE_OPERATION_TIMEDOUT)
        return "the server stalled: no data from " + url + " for " + std::to_string(stall_s) + " s";
    return std::string(*errbuf ? errbuf : curl_easy_strerror(code)) + " (" + url + ")";
}

struct transfer {
    int fd = -1;
    uint64_t offset = 0;        // bytes in the file before this response's body
    uint64_t written = 0;       // of this response's body
    bool started = false;       // the first body byte of the final response was seen
    std::string error;          // set by the write callback when it stops the transfer
    response_headers headers;
    const download_request * req = nullptr;
    std::optional<uint64_t> total() const {
        if (headers.range_total) return headers.range_total;
        if (headers.content_length) return offset + *headers.content_length;
        return std::nullopt;
    }
};

size_t on_body(char * data, size_t size, size_t n, void * user) {
    auto & t = *static_cast<transfer *>(user);
    const size_t len = size * n;
    if (!t.started) {
        t.started = true;
        if (t.headers.status == 200 && t.offset > 0) {
            // The server ignored the Range: its body is the whole file.
            if (::ftruncate(t.fd, 0) != 0) {
                t.error = std::string("cannot truncate the partial file: ") + std::strerror(errno);
                return 0;
            }
            t.offset = 0;
        } else if (t.headers.status == 206 && t.headers.range_start.value_or(0) != t.offset) {
            t.error = "the server resumed at byte " + std::to_string(t.headers.range_start.value_or(0)) +
                      ", not at byte " + std::to_string(t.offset) + " as asked";
            return 0;
        }
    }
    size_t done = 0;
    while (done < len) {
        const ssize_t w = ::write(t.fd, data + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            t.error = std::string("cannot write the partial file: ") + std::strerror(errno);
            return 0;
        }
        done += static_cast<size_t>(w);
    }
    t.written += len;
    if (t.req->on_progress) t.req->on_progress(t.offset + t.written, t.total());
    return len;
}

// curl calls this about once a second even when no byte arrives, so a stalled transfer's
// progress line still moves (its rate falls, its ETA grows).
int on_tick(void * user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto & t = *static_cast<transfer *>(user);
    if (t.req->on_progress) t.req->on_progress(t.offset + t.written, t.total());
    return 0;
}

}  // namespace

result<download_result> http_download(const download_request & req) {
    const int fd = ::open(req.partial_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return fail(req.partial_path, ": ", std::strerror(errno));
    struct fd_closer {
        int fd;
        ~fd_closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) return fail(req.partial_path, ": ", std::strerror(errno));

    transfer t;
    t.fd = fd;
    t.offset = static_cast<uint64_t>(st.st_size);
    t.req = &req;
    const uint64_t resumed_from = t.offset;
    char errbuf[CURL_ERROR_SIZE] = {0};
    auto headers = header_list(req.headers);
    auto c = make_handle(req.url, headers.get(), req.stall_timeout_s, req.connect_timeout_s, errbuf);
    if (!c) return fail("cannot start an HTTP transfer (curl_easy_init failed)");
    curl_easy_setopt(c.get(), CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c.get(), CURLOPT_HEADERDATA, &t.headers);
    curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(c.get(), CURLOPT_XFERINFOFUNCTION, on_tick);
    curl_easy_setopt(c.get(), CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(c.get(), CURLOPT_NOPROGRESS, 0L);
    // A plain Range header, not CURLOPT_RESUME_FROM: curl refuses a 200 to a resume, and a
    // server that ignores ranges should still give us the file (from the start).
    const std::string range = std::to_string(t.offset) + "-";
    if (t.offset > 0) curl_easy_setopt(c.get(), CURLOPT_RANGE, range.c_str());
    if (req.on_progress) req.on_progress(t.offset, std::nullopt);

    const CURLcode code = curl_easy_perform(c.get());
    if (!t.error.empty()) return fail(t.error, " (", req.url, ")");
    if (code != CURLE_OK) {
        // 416: nothing left to send from our offset. The partial file is the whole file
        // when the server's size (Content-Range: bytes */SIZE) is what we have.
        if (code == CURLE_HTTP_RETURNED_ERROR && t.headers.status == 416 && t.headers.range_total &&
            *t.headers.range_total == t.offset)
            return download_result{t.offset, resumed_from, t.headers.published_sha256, t.headers.content_type};
        return fail(describe_failure(code, errbuf, req.url, t.headers, req.stall_timeout_s));
    }
    if (t.offset > 0 && !t.started && t.headers.status != 206 && t.headers.status != 200)
        return fail("unexpected HTTP ", t.headers.status, " from ", req.url);
    const uint64_t size = t.offset + t.written;
    if (auto total = t.total(); total && *total != size)
        return fail("the transfer ended at byte ", size, " of ", *total, " (", req.url, "); run the same command again to resume");
    return download_result{size, t.started && t.offset == 0 ? 0 : resumed_from, t.headers.published_sha256,
                           t.headers.content_type};
}

result<std::string> http_get_text(const std::string & url, const std::vector<std::string> & headers,
                                  uint32_t stall_timeout_s) {
    char errbuf[CURL_ERROR_SIZE] = {0};
    auto list = header_list(headers);
    auto c = make_handle(url, list.get(), stall_timeout_s, stall_timeout_s, errbuf);
    if (!c) return fail("cannot start an HTTP transfer (curl_easy_init failed)");
    response_headers h;
    std::string body;
    curl_easy_setopt(c.get(), CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c.get(), CURLOPT_HEADERDATA, &h);
    curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION,
                     +[](char * data, size_t size, size_t n, void * user) -> size_t {
                         auto & b = *static_cast<std::string *>(user);
                         if (b.size() + size * n > (64u << 20)) return 0;   // an index page, not a model
                         b.append(data, size * n);
                         return size * n;
                     });
    curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &body);
    const CURLcode code = curl_easy_perform(c.get());
    if (code != CURLE_OK) return fail(describe_failure(code, errbuf, url, h, stall_timeout_s));
    return body;
}

}  // namespace hearth::daemon
