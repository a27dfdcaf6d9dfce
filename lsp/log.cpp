#include "lsp/log.h"

#include <mutex>

#include <spdlog/spdlog.h>

namespace hearth::lsp {

namespace {
std::mutex g_mu;
std::shared_ptr<spdlog::logger> g_logger;
}  // namespace

spdlog::logger & logger() {
    std::lock_guard lock(g_mu);
    if (!g_logger) g_logger = spdlog::default_logger()->clone("lsp");
    return *g_logger;
}

void set_logger(std::shared_ptr<spdlog::logger> l) {
    std::lock_guard lock(g_mu);
    g_logger = std::move(l);
}

}  // namespace hearth::lsp
