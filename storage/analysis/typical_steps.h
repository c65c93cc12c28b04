// typicalSteps(): the steps of a run that are not hiccups of the machine.
//
// A step's time is its slowest rank's; a hiccup lies more than
// max(3 x 1.4826 x MAD, 5% of the median) above the median step (MAD: the
// median absolute deviation; 1.4826 x MAD estimates a normal spread's
// sigma, so three of them keep every step of an ordinary spread, and the 5%
// floor keeps steps that differ by rounding when all but one are equal). On
// the 2-core VM a dp2 run's steps of 135-152 ms once held one of 238 ms: its
// ops, averaged into a calibration, priced every layout ~9% slow against
// measured steps that are medians. Used by the calibration (its costs) and
// by `bench predict` (the measured bubbles it compares: the steps the
// prediction describes).
//
// Contract: every step of `stepNs` is returned but the hiccups; a step
// whose time is not a number > 0 is kept (it has no record to judge); all
// of them when fewer than three have one. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <set>

namespace bubblescope::analysis {

std::set<int32_t> typicalSteps(const std::map<int32_t, double>& stepNs);

}  // namespace bubblescope::analysis
