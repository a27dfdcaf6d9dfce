// progress_bar: how a long transfer shows itself. On a terminal one line redrawn in place
// (bar, bytes, rate, ETA) at most ten times a second; otherwise (a log, a pipe, CI) a plain
// line every tenth of the way or every ten seconds, so a log stays readable.
// Thread-safety: one owner; writes only to its FILE.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "daemon/models/byte_units.h"

namespace hearth::daemon {

class progress_bar {
public:
    // `start_bytes`: already there when this run began (a resumed download); the rate and
    // ETA count only what this run moves.
    progress_bar(std::FILE * out, std::string label, uint64_t start_bytes = 0);
    void update(uint64_t done_bytes, std::optional<uint64_t> total_bytes);
    void finish(uint64_t done_bytes);   // the last line, with the average rate
    void abandon();                     // ends a redrawn line, so an error starts on its own

private:
    std::string line(uint64_t done, std::optional<uint64_t> total, bool with_bar) const;

    std::FILE * out_;
    std::string label_;
    uint64_t start_bytes_;
    bool tty_;
    std::chrono::steady_clock::time_point start_, last_draw_;
    int last_tenth_ = -1;
    size_t drawn_width_ = 0;
    std::optional<uint64_t> total_;
};

}  // namespace hearth::daemon
