// AdviceTrial: predicted against measured gain in tokens/s, the advice a
// trial takes, and the summary `bench advice` prints.
#include "cli/advice_trial.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace bubblescope::cli {
namespace {

constexpr double kMs = 1e6;

layout::Layout dp(int32_t degree, int32_t m) {
  layout::Layout l;
  l.dp = degree;
  l.microBatches = m;
  return l;
}

AdviceTrial trial(double beforeMs, double afterMs, double predictedGain) {
  AdviceTrial t;
  t.name = "poor";
  t.before = dp(2, 4);
  t.beforeStepNs = beforeMs * kMs;
  t.rule = "comm_share";
  t.dimension = "dp";
  t.change = "bucket 1000 elements -> 25 MiB";
  t.after = t.before;
  t.afterStepNs = afterMs * kMs;
  t.predictedGain = predictedGain;
  return t;
}

TEST(AdviceTrial, GainIsInTokensPerSecondSoAChangedGlobalBatchCounts) {
  const AdviceTrial same = trial(200, 160, 0.20);
  EXPECT_DOUBLE_EQ(same.measuredGain(), 200.0 / 160.0 - 1.0);  // +25%
  EXPECT_NEAR(same.errorPoints(), 5.0, 1e-9);
  AdviceTrial doubled = same;
  doubled.after = dp(2, 8);  // twice the tokens a step, in 1.6x the time
  doubled.afterStepNs = 320 * kMs;
  EXPECT_DOUBLE_EQ(doubled.measuredGain(), 2.0 * 200.0 / 320.0 - 1.0);
  const layout::Layout l = dp(2, 4);
  EXPECT_DOUBLE_EQ(tokensPerSecond(l, 1e9), 2.0 * 4 * 1 * l.model.seqLen);
  EXPECT_EQ(tokensPerSecond(l, 0), 0.0);
  EXPECT_EQ(tokensPerSecond(l, std::nan("")), 0.0);
}

TEST(AdviceTrial, GainIsTheMedianOfEachRunAgainstItsNeighbours) {
  // The machine slows by 10% a run pair while the advice takes 20% off the
  // step: every neighbouring ratio holds within the drift of one run, but
  // the ratio of the medians (before 220, after 176 against 200) mixes the
  // drift of the whole bench in.
  AdviceTrial t = trial(0, 0, 0.25);
  t.beforeStepsNs = {200 * kMs, 240 * kMs, 290 * kMs};  // b0 b1 b2
  t.afterStepsNs = {176 * kMs, 211 * kMs, 255 * kMs};   // a0 a1 a2, ran between
  t.beforeStepNs = 240 * kMs;
  t.afterStepNs = 211 * kMs;
  // Pairs in run order: (b0,a0) (b1,a0) (b1,a1) (b2,a1) (b2,a2).
  std::vector<double> gains = {200.0 / 176 - 1, 240.0 / 176 - 1, 240.0 / 211 - 1, 290.0 / 211 - 1,
                               290.0 / 255 - 1};
  std::sort(gains.begin(), gains.end());
  EXPECT_DOUBLE_EQ(t.measuredGain(), gains[2]);
  // Unequal counts (a failed run): the two steps decide.
  t.afterStepsNs.pop_back();
  EXPECT_DOUBLE_EQ(t.measuredGain(), 240.0 / 211 - 1);
  // A run without a step makes the gain unknown, not a smaller median.
  t.afterStepsNs = {176 * kMs, 0, 255 * kMs};
  EXPECT_TRUE(std::isnan(t.measuredGain()));
}

TEST(AdviceTrial, WithoutASuggestionOrAStepTheErrorsAreNaN) {
  AdviceTrial none;
  none.before = dp(2, 4);
  none.beforeStepNs = 100 * kMs;
  EXPECT_FALSE(none.suggested());
  EXPECT_TRUE(std::isnan(none.measuredGain()));
  EXPECT_TRUE(std::isnan(none.errorPoints()));
  AdviceTrial failed = trial(100, 0, 0.1);  // the after-run recorded no step
  EXPECT_TRUE(std::isnan(failed.measuredGain()));
}

TEST(AdviceTrial, TakesTheFirstAdviceThatNamesALayoutAndAGain) {
  std::vector<analysis::Advice> advice(3);
  advice[0].rule = "bubble_above_formula";  // a finding without a change
  advice[1].rule = "comm_share";
  advice[1].layout = dp(2, 8);  // a change without a prediction
  advice[2].rule = "few_micro_batches";
  advice[2].layout = dp(2, 8);
  advice[2].predicted = analysis::PredictedGain{};
  EXPECT_EQ(actionableAdvice(advice), &advice[2]);
  EXPECT_EQ(actionableAdvice({}), nullptr);
  // The rule a poor layout was made for goes first, wherever it stands;
  // absent or without a change, the first actionable one.
  advice.push_back(advice[2]);
  advice[3].rule = "memory_headroom";
  EXPECT_EQ(actionableAdvice(advice, "memory_headroom"), &advice[3]);
  EXPECT_EQ(actionableAdvice(advice, "comm_share"), &advice[2]);
  EXPECT_EQ(actionableAdvice(advice, "stragglers"), &advice[2]);
}

TEST(AdviceTrial, SummaryCountsTheSuggestionsWithinTenPoints) {
  AdviceTrial none;
  none.before = dp(2, 4);
  const std::vector<AdviceTrial> trials = {trial(200, 160, 0.20), trial(100, 100, 0.30),
                                           trial(100, 50, 0.85), none};
  // errors: 5, 30 and 15 points; no suggestion on the last
  const AdviceSummary s = summarizeAdviceTrials(trials);
  EXPECT_EQ(s.trials, 4);
  EXPECT_EQ(s.suggestions, 3);
  EXPECT_EQ(s.withinTenPoints, 1);
  EXPECT_NEAR(s.medianErrorPoints, 15.0, 1e-9);
  EXPECT_NEAR(s.maxErrorPoints, 30.0, 1e-9);
  const std::string text = adviceTrialsToText(trials);
  for (const char* key : {"trials: 4\n", "suggestions: 3\n", "within_10_points: 1\n",
                          "median_gain_error_points: 15.0\n", "max_gain_error_points: 30.0\n",
                          "bucket 1000 elements -> 25 MiB", "(none with a change)", "+25.0%"}) {
    EXPECT_NE(text.find(key), std::string::npos) << key << "\n" << text;
  }
}

}  // namespace
}  // namespace bubblescope::cli
