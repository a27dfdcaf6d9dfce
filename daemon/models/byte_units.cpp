#include "daemon/models/byte_units.h"

#include <cinttypes>
#include <cstdio>

namespace hearth::daemon {

std::string human_bytes(uint64_t n, int decimals) {
    static const char * units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(n);
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    if (u == 0) std::snprintf(buf, sizeof buf, "%" PRIu64 " B", n);
    else std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, units[u]);
    return buf;
}

}  // namespace hearth::daemon
