// A layout's prediction (planning/prediction.h) as the app shows it: the
// layout editor's prediction line and the planner's table use these, so the
// two say the same numbers the same way.
#pragma once

#include <QString>
#include <QStringList>
#include <optional>
#include <string>
#include <vector>

#include "planning/calibration.h"
#include "engine/layout/layout.h"
#include "planning/planner.h"
#include "planning/prediction.h"
#include "planning/prediction_summary.h"

namespace bubblescope::gui {

// The FLOPs-only rate, the same as `bubblescope-cli plan` without --calibration.
using layout::kFlopsEstimatePerSecond;

// The calibration a prediction of `model` uses: `measured` when there is
// one, else the FLOPs estimate of `model`.
layout::Calibration calibrationFor(const std::optional<layout::Calibration>& measured,
                                   const layout::ModelConfig& model);

// The largest stage's bubble (0 without stages) and memory in bytes.
using layout::worstBubble;  // planning/prediction.h
double peakMemoryBytes(const layout::Prediction& p);
// Exposed communication per step summed over the dimensions, ns.
double totalExposedCommNs(const layout::Prediction& p);
// Exposed communication per step by dimension, "pp 24.1 ms · dp 3.20 ms"
// (largest first; dimensions with none left out), or "none".
QString exposedCommText(const layout::Prediction& p);
// "1,915" tokens per second.
QString tokensPerSecondText(double tokensPerSecond);
// One line: step time, tokens/s, worst stage bubble, exposed communication,
// memory of the largest stage.
QString predictionLine(const layout::Prediction& p);
// The warnings worth showing of predictions costed from `measured`: none
// for the FLOPs estimate (whose communication is free by construction, as
// its name says), else at most kMaxWarnings lines and "(N more)".
inline constexpr int kMaxWarnings = 2;
QStringList shownWarnings(const std::vector<std::string>& warnings, bool measured);
// "dp2 tp2 pp1 · zero1 · m16 · recompute" (schedule and v only when pp > 1).
QString layoutShortName(const layout::Layout& l);

}  // namespace bubblescope::gui
