// Straggler check: a rank whose compute, or whose arrival at its last big
// collective, is late against the other ranks of its pipeline stage in most
// steps (ranks of one stage run the same work, so they should agree).
//
// The arrival signal follows Holistic Trace Analysis: per rank and step take
// the last collective lasting at least 1% of the step; the ranks that start
// it latest are stragglers (docs/formulas.md). Lateness is measured against the
// lower median of the stage's ranks in that step.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "storage/analysis/rank_step_analyzer.h"
#include "storage/analysis/run_report.h"

namespace bubblescope::analysis {

// What the check needs of one rank's step (a compact RankStepMetrics).
struct StragglerSample {
  int32_t rank = 0;
  int32_t step = 0;
  int64_t stepNs = 0;
  int64_t computeNs = 0;
  int64_t lastCollectiveStartNs = -1;  // -1: no collective of 1% of the step or more
};
StragglerSample stragglerSampleOf(const RankStepMetrics& m);

struct StragglerOptions {
  double thresholdFraction = 0.05;  // late by more than this share of the step time
  double minLateShare = 0.5;        // in at least this share of the compared steps
};

// `stageOfRank` maps every rank in `samples` to its pipeline stage. Result
// ordered by rank; a rank appears at most once ("compute" when its compute
// is late, else "collective arrival").
std::vector<Straggler> findStragglers(const std::vector<StragglerSample>& samples,
                                      const std::map<int32_t, int32_t>& stageOfRank,
                                      const StragglerOptions& options = {});

}  // namespace bubblescope::analysis
