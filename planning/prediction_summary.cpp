#include "planning/prediction_summary.h"

#include <algorithm>

namespace bubblescope::layout {

double worstBubble(const Prediction& p) {
  double worst = 0;
  for (double b : p.bubble) worst = std::max(worst, b);
  return worst;
}

ExposedShare largestExposedComm(const Prediction& p) {
  ExposedShare largest;
  for (const auto& [dim, ns] : p.exposedCommNs) {
    if (p.stepNs > 0 && ns / p.stepNs > largest.share) largest = {dim, ns / p.stepNs};
  }
  return largest;
}

bool isGuess(const std::string& warning) { return warning.rfind("no ", 0) == 0; }

}  // namespace bubblescope::layout
