// Statistics of measured run times: telling a slower schedule from a noisy measurement.
#pragma once

#include <vector>

namespace tessel::records {

/** Whether the times `a` are larger (slower) than the times `b` beyond their spread: a one-sided
 *  Mann-Whitney U test at level alpha, exact for distinct times (a tie counts
 *  against a's being slower, so ties never make it say yes). False with fewer than 3 samples a side
 *  (no evidence either way). With 5 samples each and alpha 0.05, at least 21 of the 25 pairs must go a's
 *  way. For telling "slower" from "measured a few percent slower once" on a noisy machine. */
bool slower_beyond_noise(const std::vector<double>& a, const std::vector<double>& b, double alpha = 0.05);

}  // namespace tessel::records
