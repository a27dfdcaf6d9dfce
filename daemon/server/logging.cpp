#include "daemon/server/logging.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <sys/stat.h>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace hearth::daemon {

namespace {
status make_parents(const std::string & file) {
    for (size_t i = 1; i < file.size(); ++i) {
        if (file[i] != '/') continue;
        const std::string dir = file.substr(0, i);
        if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return fail("log file ", file, ": ", dir, ": ", std::strerror(errno));
    }
    return {};
}
}  // namespace

status setup_logging(const std::string & level, const std::string & file, bool to_stderr) {
    std::vector<spdlog::sink_ptr> sinks;
    if (to_stderr) sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
    if (!file.empty()) {
        if (auto s = make_parents(file); !s) return s;
        try {
            // 8 MiB per file, 3 old files kept: a chatty debug session stays bounded on disk.
            sinks.push_back(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(file, 8u << 20, 3));
        } catch (const spdlog::spdlog_ex & e) {
            return fail("log file ", file, ": ", e.what());
        }
    }
    if (sinks.empty()) sinks.push_back(std::make_shared<spdlog::sinks::null_sink_mt>());
    auto logger = std::make_shared<spdlog::logger>("hearth", sinks.begin(), sinks.end());
    logger->set_level(spdlog::level::from_str(level));
    logger->flush_on(spdlog::level::info);
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%t] %v");
    spdlog::set_default_logger(logger);
    return {};
}

}  // namespace hearth::daemon
