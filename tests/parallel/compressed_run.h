// Shared by the compressed data-parallel suites (tiny and small): a dp run
// of a --grad-compression spec with its bus-byte counts, and the check that
// every variant trains close to the uncompressed run.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "parallel_fixture.h"

namespace bubblescope::engine::testing {

struct CompressedRun {
  RunResult result;
  double ratio = 0.0;
  int64_t sentBytes = 0;
  int64_t uncompressedBytes = 0;
};

inline CompressedRun runCompressed(Communicator& comm, const TrainerOptions& options,
                                   const std::string& spec, int steps,
                                   int64_t bucketElements = 8192) {
  ParallelOptions p;
  p.bucketElements = bucketElements;
  p.compression = layout::parseGradCompression(spec).value();
  CompressedRun run;
  auto made = RankTrainer::create(options, {.parallel = p, .groups = {.dp = &comm}});
  EXPECT_TRUE(made.isOk()) << made.status().toString();
  if (!made.isOk() || !recordSteps(**made, steps, run.result, &(*made)->model())) return run;
  auto params = (*made)->parameters();
  if (params.isOk()) run.result.params = std::move(params).value();
  run.ratio = (*made)->gradTraffic().ratio();
  run.sentBytes = (*made)->gradTraffic().sentBytes.load();
  run.uncompressedBytes = (*made)->gradTraffic().uncompressedBytes.load();
  return run;
}

// A compression spec, the largest |loss - uncompressed loss| allowed over
// the steps, and the exact bus-byte ratio where the encoding fixes it.
struct Variant {
  const char* spec;
  double maxLossDistance;
  double ratio;                   // 0: checked as > 1 only
  double maxFinalDistance = 0.0;  // > 0: |last loss - uncompressed last loss| bound too
};

// Runs `none` and then every variant for `steps` steps on `comm`: each
// stays finite, trains (its loss falls by more than `minLossDrop`), stays
// within its distance of none at every step (and at the last, where
// given), and sends fewer bus bytes. Rank 0 prints each run's losses.
inline void expectVariantsTrainCloseToNone(Communicator& comm, const TrainerOptions& options,
                                           const std::vector<Variant>& variants, int steps,
                                           int64_t bucketElements, double minLossDrop,
                                           const char* label) {
  const CompressedRun none = runCompressed(comm, options, "none", steps, bucketElements);
  ASSERT_EQ(none.result.losses.size(), size_t(steps));
  for (const Variant& v : variants) {
    const CompressedRun run = runCompressed(comm, options, v.spec, steps, bucketElements);
    const std::vector<double>& loss = run.result.losses;
    ASSERT_EQ(loss.size(), size_t(steps)) << v.spec;
    double worst = 0.0;
    for (int s = 0; s < steps; ++s) {
      ASSERT_TRUE(std::isfinite(loss[s])) << v.spec << " step " << s;
      worst = std::max(worst, std::fabs(loss[s] - none.result.losses[s]));
    }
    if (worldRank() == 0) {
      std::printf(
          "[ compression %s ] %-10s loss %.4f -> %.4f (none %.4f -> %.4f), worst |dloss| %.3e, "
          "ratio %.3f\n",
          label, v.spec, loss.front(), loss.back(), none.result.losses.front(),
          none.result.losses.back(), worst, run.ratio);
      std::printf("[ compression %s ] %-10s per step:", label, v.spec);
      for (int s = 0; s < steps; ++s) std::printf(" %.3f/%.3f", loss[s], none.result.losses[s]);
      std::printf("\n");
    }
    EXPECT_LT(loss.back(), loss.front() - minLossDrop) << v.spec << " does not train";
    EXPECT_LE(worst, v.maxLossDistance) << v.spec;
    if (v.maxFinalDistance > 0.0) {
      EXPECT_LE(std::fabs(loss.back() - none.result.losses.back()), v.maxFinalDistance) << v.spec;
    }
    if (v.ratio > 0.0) {
      EXPECT_NEAR(run.ratio, v.ratio, 1e-12) << v.spec;
    }
    EXPECT_GT(run.ratio, 1.0) << v.spec;
  }
}

}  // namespace bubblescope::engine::testing
