// Catch2's runner, with the skips of tests/skip.h: a run that skipped a case and failed none
// exits with k_skip_exit_code, so ctest shows it as skipped; each skip is listed with its reason.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "tests/skip.h"

namespace {

struct skipped_case {
    std::string name, reason;
};

std::mutex skips_mu;
std::vector<skipped_case> skips;

}  // namespace

void hearth::test::skip(const std::string & reason) {
    const std::string name = Catch::getResultCapture().getCurrentTestName();
    std::printf("SKIPPED: %s: %s\n", name.c_str(), reason.c_str());
    std::lock_guard lock(skips_mu);
    skips.push_back({name, reason});
}

int main(int argc, char ** argv) {
    const int status = Catch::Session().run(argc, argv);   // the number of failed cases (or listed ones)
    std::lock_guard lock(skips_mu);
    if (skips.empty()) return status;
    std::printf("\n%zu test case(s) skipped, not checked here:\n", skips.size());
    for (const auto & s : skips) std::printf("  SKIPPED: %s: %s\n", s.name.c_str(), s.reason.c_str());
    return status != 0 ? status : hearth::test::k_skip_exit_code;
}
