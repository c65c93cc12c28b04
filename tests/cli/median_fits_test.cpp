// withMedianFits (cli/calibrate_benchmark.h): a calibration run made three
// times gives each fit as the median of the three, not one run's.
#include <gtest/gtest.h>

#include "cli/calibrate_benchmark.h"

namespace bubblescope::cli {
namespace {

layout::Calibration run(double bucketNs, double alphaNs, double betaNsPerByte) {
  layout::Calibration c;
  c.ops.push_back({"zero", "bucket", 0, 1, bucketNs, bucketNs * 0.8, 7});
  c.links.push_back({"zero", "same_host", "reduce_scatter_micro_batch", 2, alphaNs,
                     betaNsPerByte, 28, 8, 1 << 20});
  return c;
}

TEST(PredictMedianFits, EachFitIsTheMedianOverTheRunsThatAllMeasuredIt) {
  const std::vector<layout::Calibration> runs = {run(1.03, 0, 0.262), run(1.28, 5e3, 0.321),
                                                 run(1.16, 2e3, 0.300)};
  layout::Calibration kept = runs[1];
  // A fit only the kept run measured stays as it is.
  kept.ops.push_back({"step", "other", 0, 1, 0.4, 0.4, 5});
  kept.links.push_back({"dp", "same_host", "allreduce", 2, 1e4, 0.2, 10, 8, 8});
  const layout::Calibration out = withMedianFits(kept, runs);
  ASSERT_EQ(out.ops.size(), 2u);
  EXPECT_DOUBLE_EQ(out.ops[0].wallNs, 1.16);
  EXPECT_DOUBLE_EQ(out.ops[0].cpuNs, 1.16 * 0.8);
  EXPECT_EQ(out.ops[0].samples, 7);
  EXPECT_DOUBLE_EQ(out.ops[1].wallNs, 0.4);
  ASSERT_EQ(out.links.size(), 2u);
  EXPECT_DOUBLE_EQ(out.links[0].alphaNs, 2e3);
  EXPECT_DOUBLE_EQ(out.links[0].betaNsPerByte, 0.300);
  EXPECT_DOUBLE_EQ(out.links[1].alphaNs, 1e4);
  // A link fit of another group size is another fit.
  std::vector<layout::Calibration> other = runs;
  other[0].links[0].groupSize = 4;
  const layout::Calibration partial = withMedianFits(runs[1], other);
  EXPECT_DOUBLE_EQ(partial.links[0].betaNsPerByte, 0.321);
  EXPECT_DOUBLE_EQ(partial.ops[0].wallNs, 1.16);
}

}  // namespace
}  // namespace bubblescope::cli
