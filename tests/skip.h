// A test case that cannot check what it names on this machine says so, and is never counted as
// passed: HEARTH_SKIP records the case and the reason and leaves the case. catch_main.cpp ends a
// run that skipped something and failed nothing with k_skip_exit_code, which every Catch2 ctest
// entry declares as its SKIP_RETURN_CODE, and lists each skip with its reason.
// scripts/test then fails on any skip but the ones the machine's hardware explains.
// Thread-safety: skip() may be called from any thread.
#pragma once

#include <sstream>
#include <string>

namespace hearth::test {

inline constexpr int k_skip_exit_code = 77;

// Records that the running test case did not check what it names, and why.
void skip(const std::string & reason);

}  // namespace hearth::test

// Records the skip (the reason streamed as in Catch2's INFO) and returns from the test case.
#define HEARTH_SKIP(reason)                                  \
    do {                                                     \
        std::ostringstream hearth_skip_reason_;              \
        hearth_skip_reason_ << reason;                       \
        ::hearth::test::skip(hearth_skip_reason_.str());     \
        return;                                              \
    } while (0)
