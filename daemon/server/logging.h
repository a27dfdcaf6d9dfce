// logging: spdlog set up for the daemon process. Logs go to stderr and a rotating file,
// NEVER to stdout: with the stdio transport (and in the `hearth lsp` shim) stdout carries
// the protocol, and one stray line would corrupt the editor's stream. spdlog's own default
// logger writes to stdout, so setup replaces it before anything else logs.
// Every layer logs through spdlog::default_logger() or a named logger sharing its sinks.
// Thread-safety: call setup once from main before other threads start; loggers are then
// safe from any thread (spdlog's _mt sinks).
#pragma once

#include <string>

#include "base/result.h"

namespace hearth::daemon {

// level: trace|debug|info|warn|error|critical|off. file: "" for stderr only.
status setup_logging(const std::string & level, const std::string & file, bool to_stderr = true);

}  // namespace hearth::daemon
