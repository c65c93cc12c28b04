// What a Prediction says at a glance, for the planner's tables, the
// advice and the cluster text: its worst bubble, its most exposed
// dimension, and whether a warning marks a cost filled in.
//
// Pure; each takes a Prediction of planning/prediction.h.
#pragma once

#include <string>

#include "planning/prediction.h"

namespace bubblescope::layout {

// Whether a warning of a Prediction says a cost was filled in, not measured
// (it begins "no ").
bool isGuess(const std::string& warning);

// The worst stage's bubble (0 without stages).
double worstBubble(const Prediction& p);

// The dimension whose exposed communication is the largest share of the
// step, with that share; {"", 0} when nothing is exposed.
struct ExposedShare {
  std::string dim;
  double share = 0;
};
ExposedShare largestExposedComm(const Prediction& p);

}  // namespace bubblescope::layout
