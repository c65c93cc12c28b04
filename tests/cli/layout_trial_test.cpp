// The prediction-accuracy figures of `bench predict` and `plan --run`
// (cli/layout_trial.h) and their scatter picture (cli/trial_scatter.h), on
// hand-built trials whose errors are known.
#include "cli/layout_trial.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cli/trial_scatter.h"

namespace bubblescope::cli {
namespace {

LayoutTrial trial(double predictedMs, double measuredMs, std::vector<double> predictedBubble,
                  std::vector<double> measuredBubble) {
  LayoutTrial t;
  t.prediction.stepNs = predictedMs * 1e6;
  t.prediction.bubble = std::move(predictedBubble);
  t.measuredStepNs = measuredMs * 1e6;
  t.measuredBubble = std::move(measuredBubble);
  return t;
}

TEST(LayoutTrial, ErrorsAreRelativeStepAndBubblePoints) {
  const LayoutTrial t = trial(110, 100, {0.20, 0.30}, {0.25, 0.20});
  EXPECT_NEAR(t.stepRelError(), 0.10, 1e-12);
  // Mean over the stages of |predicted - measured|: (5 + 10) / 2 points.
  EXPECT_NEAR(t.bubbleErrorPoints(), 7.5, 1e-9);
  // Nothing measured: no error, not 0.
  EXPECT_TRUE(std::isnan(trial(1, 0, {}, {}).stepRelError()));
  EXPECT_TRUE(std::isnan(trial(1, 1, {0.1}, {}).bubbleErrorPoints()));
}

// Exposed communication: the prediction's per-dimension exposed times summed
// over its step, against the measured share, in points; NaN unmeasured.
TEST(LayoutTrial, ExposedCommErrorIsInPointsOfTheStep) {
  LayoutTrial t = trial(100, 100, {0.0}, {0.0});
  t.prediction.exposedCommNs = {{"dp", 3e6}, {"tp", 2e6}};  // 5 ms of a 100 ms step
  EXPECT_NEAR(t.predictedExposedComm(), 0.05, 1e-12);
  EXPECT_TRUE(std::isnan(t.exposedCommErrorPoints()));
  t.measuredExposedComm = 0.08;
  EXPECT_NEAR(t.exposedCommErrorPoints(), 3.0, 1e-9);
  LayoutTrial other = trial(100, 100, {0.0}, {0.0});
  other.measuredExposedComm = 0.01;  // predicted 0: 1 point
  LayoutTrial third = trial(100, 100, {0.0}, {0.0});
  third.measuredExposedComm = 0.10;  // 10 points
  const TrialSummary s = summarizeTrials({t, other, third, trial(1, 0, {}, {})});
  EXPECT_NEAR(s.medianExposedCommErrorPoints, 3.0, 1e-9);
  EXPECT_NE(trialsToText({t}).find("median_exposed_comm_error_points: 3.00\n"), std::string::npos);
}

TEST(LayoutTrial, SummaryIsMedianAndMaxOverTheTrials) {
  const std::vector<LayoutTrial> trials = {
      trial(101, 100, {0.0}, {0.01}),  // 1%, 1 point
      trial(90, 100, {0.2}, {0.3}),    // 10%, 10 points
      trial(103, 100, {0.1}, {0.12}),  // 3%, 2 points
      trial(150, 100, {0.5}, {0.1}),   // 50%, 40 points
      trial(1, 0, {}, {}),             // not measured: left out
  };
  const TrialSummary s = summarizeTrials(trials);
  EXPECT_NEAR(s.medianRelError, (0.03 + 0.10) / 2, 1e-12);
  EXPECT_NEAR(s.maxRelError, 0.50, 1e-12);
  EXPECT_NEAR(s.medianBubbleErrorPoints, (2 + 10) / 2.0, 1e-9);
  const std::string text = trialsToText(trials);
  EXPECT_NE(text.find("layouts: 5\nmedian_rel_error: 0.0650\nmax_rel_error: 0.5000\n"
                      "median_bubble_error_points: 6.00\n"),
            std::string::npos)
      << text;
}

// A trial with the machine's speed (bench predict's speed reference): the
// prediction times the speed against the measurement, apart from the plain
// error; the text adds both columns and the median of the referenced errors.
TEST(LayoutTrial, PredictSpeedReferencedErrorTakesOutTheMachinesDrift) {
  std::vector<LayoutTrial> trials = {trial(100, 120, {}, {}), trial(100, 100, {}, {}),
                                     trial(100, 90, {}, {})};
  trials[0].speed = 1.2;  // the machine 20% slower: 120 / 120
  trials[1].speed = 1.05;
  EXPECT_NEAR(trials[0].stepRelError(), 20.0 / 120, 1e-12);
  EXPECT_NEAR(trials[0].speedReferencedRelError(), 0.0, 1e-12);
  EXPECT_NEAR(trials[1].speedReferencedRelError(), 0.05, 1e-12);
  EXPECT_TRUE(std::isnan(trials[2].speedReferencedRelError()));  // no reference
  const std::string text = trialsToText(trials);
  EXPECT_NE(text.find("speed  referenced error"), std::string::npos) << text;
  EXPECT_NE(text.find("1.200              0.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("median_rel_error_speed_referenced: 0.0250\n"), std::string::npos) << text;
  EXPECT_EQ(trialsToText({trial(100, 90, {}, {})}).find("speed"), std::string::npos);
}

// Spearman's rho of predicted against measured tokens/s: each trial's
// tokens per step are the prediction's tokens/s x its step (1000 tokens
// here, 2000 for the last), so tokens/s orders the trials even where the
// steps differ in micro-batches.
TEST(LayoutTrial, RankCorrelationOrdersPredictedAgainstMeasuredTokensPerSecond) {
  auto withTokens = [](double predictedMs, double measuredMs, double tokens) {
    LayoutTrial t = trial(predictedMs, measuredMs, {0.0}, {0.0});
    t.prediction.tokensPerSecond = tokens / (predictedMs * 1e-3);
    return t;
  };
  // Predicted tokens/s order 1 > 2 > 3 > 4; measured 2 > 1 > 3 > 4 (the
  // last: 2000 tokens in 230 ms): ranks differ by 1, 1, 0, 0, rho = 1 - 6 * 2 / 60.
  std::vector<LayoutTrial> trials = {withTokens(100, 105, 1000), withTokens(101, 100, 1000),
                                     withTokens(110, 108, 1000), withTokens(240, 230, 2000)};
  EXPECT_NEAR(summarizeTrials(trials).rankCorrelation, 0.8, 1e-12);
  EXPECT_NE(trialsToText(trials).find("rank_correlation: 0.800\n"), std::string::npos)
      << trialsToText(trials);
  trials.resize(1);  // one trial orders nothing
  EXPECT_TRUE(std::isnan(summarizeTrials(trials).rankCorrelation));
}

TEST(TrialScatter, OneNumberedDotPerTrialOnBothPanels) {
  std::vector<LayoutTrial> trials = {trial(101, 100, {0.0}, {0.01}), trial(90, 100, {0.2}, {0.3})};
  trials[1].layout.pp = 2;
  trials[1].layout.microBatches = 4;
  const std::string svg = trialScatterSvg(trials, "a <title>");
  size_t dots = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) {
    ++dots;
  }
  EXPECT_EQ(dots, 4u);  // step and bubble panels
  EXPECT_NE(svg.find("a &lt;title&gt;"), std::string::npos);
  EXPECT_NE(svg.find(">2  dp1-pp2 1f1b m4</text>"), std::string::npos) << svg;
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

}  // namespace
}  // namespace bubblescope::cli
