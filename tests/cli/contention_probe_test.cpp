// The background probe (cli/contention_probe.h): bounds that hold at any
// load (a thread's CPU time never exceeds the wall time it spun; the
// background is finite and not negative) and its refusals. What the
// background does to a prediction is planning/contention.h's, tested in
// layout_test (PredictContention.*).
#include "cli/contention_probe.h"

#include <gtest/gtest.h>

#include <cmath>

namespace bubblescope::cli {
namespace {

TEST(PredictBackgroundProbe, MeasuresAShareOfACoreAndAFiniteBackground) {
  auto load = measureBackground(20'000'000);
  ASSERT_TRUE(load.isOk()) << load.status().message();
  EXPECT_GE(load->cores, 1);
  EXPECT_GT(load->share, 0.0);
  EXPECT_LE(load->share, 1.0 + 1e-9);
  EXPECT_TRUE(std::isfinite(load->background));
  EXPECT_GE(load->background, 0.0);
  // B = C / share - C, as the model defines it.
  EXPECT_NEAR(load->background, std::max(0.0, load->cores / load->share - load->cores), 1e-9);
}

TEST(PredictBackgroundProbe, RefusesAWallTimeOutOfRange) {
  for (int64_t bad : {int64_t{0}, int64_t{-5}, int64_t{999'999}, int64_t{20'000'000'000}}) {
    auto load = measureBackground(bad);
    ASSERT_FALSE(load.isOk()) << bad;
    EXPECT_NE(load.status().message().find("outside 1 ms .. 10 s"), std::string::npos)
        << load.status().message();
  }
}

}  // namespace
}  // namespace bubblescope::cli
