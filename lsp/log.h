// The lsp layer's spdlog logger ("lsp"). By default a clone of spdlog's default logger made
// on first use (so it writes where the daemon sends its logs, never to stdout unless the
// default logger does); set_logger() replaces it.
// Thread-safety: logger() and set_logger() may be called from any thread.
#pragma once

#include <memory>

#include <spdlog/logger.h>

namespace hearth::lsp {

spdlog::logger & logger();
void set_logger(std::shared_ptr<spdlog::logger> l);

}  // namespace hearth::lsp
