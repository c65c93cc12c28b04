// trialScatterSvg(): predicted against measured of a set of layout trials as
// an SVG picture (docs/prediction.md, "Accuracy"): left, step time in ms
// (the y = x line and a ±5% band); right, the mean bubble over the stages
// in % (y = x). One numbered dot per trial, the
// numbers named in a legend on the right. Plain SVG 1.1, no scripts.
#pragma once

#include <string>
#include <vector>

#include "cli/layout_trial.h"

namespace bubblescope::cli {

std::string trialScatterSvg(const std::vector<LayoutTrial>& trials, const std::string& title);

}  // namespace bubblescope::cli
