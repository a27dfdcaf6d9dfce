#include "daemon/models/progress_bar.h"

#include <algorithm>
#include <cinttypes>

#include <unistd.h>

namespace hearth::daemon {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_between(clock_type::time_point a, clock_type::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

std::string human_duration(double s) {
    char buf[32];
    const auto t = static_cast<uint64_t>(s + 0.5);
    if (t >= 3600) std::snprintf(buf, sizeof buf, "%" PRIu64 ":%02" PRIu64 ":%02" PRIu64, t / 3600, t / 60 % 60, t % 60);
    else std::snprintf(buf, sizeof buf, "%" PRIu64 ":%02" PRIu64, t / 60, t % 60);
    return buf;
}

}  // namespace

progress_bar::progress_bar(std::FILE * out, std::string label, uint64_t start_bytes)
    : out_(out), label_(std::move(label)), start_bytes_(start_bytes), tty_(::isatty(::fileno(out)) == 1),
      start_(clock_type::now()), last_draw_(start_) {}

std::string progress_bar::line(uint64_t done, std::optional<uint64_t> total, bool with_bar) const {
    const double secs = seconds_between(start_, clock_type::now());
    const uint64_t moved = done > start_bytes_ ? done - start_bytes_ : 0;
    // Under half a second the rate is mostly the connection's set-up: not shown yet.
    const double rate = secs >= 0.5 ? static_cast<double>(moved) / secs : 0;
    std::string s = label_ + " ";
    if (total && *total > 0) {
        const double frac = std::min(1.0, static_cast<double>(done) / static_cast<double>(*total));
        if (with_bar) {
            const int width = 24, full = static_cast<int>(frac * width);
            s += "[" + std::string(full, '=') + (full < width ? ">" : "") + std::string(std::max(0, width - full - 1), ' ') + "] ";
        }
        char pct[16];
        std::snprintf(pct, sizeof pct, "%3.0f%% ", frac * 100);
        s += pct + human_bytes(done) + " / " + human_bytes(*total);
    } else {
        s += human_bytes(done);
    }
    if (rate > 0) s += "  " + human_bytes(static_cast<uint64_t>(rate)) + "/s";
    if (total && rate > 0 && done < *total)
        s += "  ETA " + human_duration(static_cast<double>(*total - done) / rate);
    return s;
}

void progress_bar::update(uint64_t done, std::optional<uint64_t> total) {
    if (total) total_ = total;
    const auto now = clock_type::now();
    if (tty_) {
        if (seconds_between(last_draw_, now) < 0.1) return;
        last_draw_ = now;
        const std::string s = line(done, total_, true);
        std::fprintf(out_, "\r%s%s", s.c_str(), std::string(drawn_width_ > s.size() ? drawn_width_ - s.size() : 0, ' ').c_str());
        drawn_width_ = s.size();
        std::fflush(out_);
        return;
    }
    const int tenth = total_ && *total_ > 0 ? static_cast<int>(done * 10 / *total_) : -1;
    const bool new_tenth = tenth > last_tenth_ && tenth < 10;
    if (!new_tenth && seconds_between(last_draw_, now) < 10) return;
    if (new_tenth) last_tenth_ = tenth;
    last_draw_ = now;
    std::fprintf(out_, "%s\n", line(done, total_, false).c_str());
    std::fflush(out_);
}

void progress_bar::abandon() {
    if (tty_ && drawn_width_ > 0) std::fprintf(out_, "\n");
    drawn_width_ = 0;
    std::fflush(out_);
}

void progress_bar::finish(uint64_t done) {
    const double secs = seconds_between(start_, clock_type::now());
    const uint64_t moved = done > start_bytes_ ? done - start_bytes_ : 0;
    std::string s = label_ + " " + human_bytes(done);
    if (start_bytes_ > 0) s += " (" + human_bytes(start_bytes_) + " were already there)";
    char tail[64];
    std::snprintf(tail, sizeof tail, " in %.1f s", secs);
    s += tail;
    if (secs > 0.05) s += ", " + human_bytes(static_cast<uint64_t>(static_cast<double>(moved) / secs)) + "/s";
    if (tty_) std::fprintf(out_, "\r%s%s\n", s.c_str(), std::string(drawn_width_ > s.size() ? drawn_width_ - s.size() : 0, ' ').c_str());
    else std::fprintf(out_, "%s\n", s.c_str());
    std::fflush(out_);
}

}  // namespace hearth::daemon
