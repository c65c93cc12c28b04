// Text and JSON of cluster plans and predictions (plan --hardware, simulate
// --hardware, bench cluster; docs/prediction.md, "The cluster model").
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "planning/cluster_plan.h"

namespace bubblescope::cli {

// One row per candidate: layout, b, m, step, tokens/s, TFLOP/s per GPU,
// MFU, memory per GPU, the worst stage's bubble, exposed communication per
// dimension, and what limits it; then how many layouts were searched.
std::string clusterPlanToText(const layout::ClusterPlanRequest& r, const layout::ClusterPlan& p);
nlohmann::json clusterPlanToJson(const layout::ClusterPlanRequest& r, const layout::ClusterPlan& p);

// A cluster prediction's summary lines (simulate --hardware).
std::string clusterPredictionToText(const layout::Layout& l, const layout::Prediction& p,
                                    const layout::HardwareProfile& hw,
                                    const layout::ClusterSettings& s);

}  // namespace bubblescope::cli
