// byte_units: byte counts as people read them ("241.4 MiB"), for the command line's output.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace hearth::daemon {

// Binary units (B, KiB, MiB, ...); `decimals` after the point above 1 KiB, whole bytes below.
std::string human_bytes(uint64_t n, int decimals = 1);

}  // namespace hearth::daemon
