// Summaries of repeated benchmark samples, shared by `hearth bench` and `hearth bench trace`.
// Thread-safety: pure functions.
#pragma once

#include <vector>

namespace hearth::daemon {

// The p-quantile (0..1) of v, linearly interpolated between neighbours (p = 0.5: the median;
// for an even count the mean of the middle two); 0 for no samples.
double percentile(std::vector<double> v, double p);

}  // namespace hearth::daemon
