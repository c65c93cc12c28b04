// The run output parser behind the progress strip.
#include "gui/run_progress.h"

#include <gtest/gtest.h>

#include <QProgressBar>
#include <cmath>

#include "gui/run_progress_widget.h"

namespace bubblescope::gui {
namespace {

TEST(RunProgress, ParsesTheTrainLine) {
  const auto p = parseProgressLine(
      "step     3/40 | loss 5.2400 | lr 3.00e-04 | grad norm 1.234 |    12345 tok/s |    0.12 s");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->step, 3);
  EXPECT_EQ(p->steps, 40);
  ASSERT_TRUE(p->loss.has_value());
  EXPECT_DOUBLE_EQ(*p->loss, 5.24);
  ASSERT_TRUE(p->tokensPerS.has_value());
  EXPECT_DOUBLE_EQ(*p->tokensPerS, 12345.0);
  EXPECT_TRUE(progressText(*p).startsWith("step 3/40 · loss 5.2400 · "));
}

TEST(RunProgress, AcceptsPrefixesAndMissingParts) {
  const auto p = parseProgressLine("[1,0]<stdout>: step 12/12 | loss nan");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->step, 12);
  ASSERT_TRUE(p->loss.has_value());
  EXPECT_TRUE(std::isnan(*p->loss));
  EXPECT_FALSE(p->tokensPerS.has_value());
  const auto q = parseProgressLine("step 2/5 | 1.5e3 tok/s");
  ASSERT_TRUE(q.has_value());
  EXPECT_FALSE(q->loss.has_value());
  EXPECT_DOUBLE_EQ(*q->tokensPerS, 1500.0);
}

TEST(RunProgress, IgnoresOtherLines) {
  EXPECT_FALSE(parseProgressLine("error: rank 2 failed: out of memory").has_value());
  EXPECT_FALSE(parseProgressLine("step 1 loss 5.5").has_value());
  EXPECT_FALSE(parseProgressLine("").has_value());
}

TEST(RunProgressWidget, FollowsTheLinesAndShowsTheOutcome) {
  RunProgressWidget w;
  w.started(4);
  w.addOutputLine("loading data");
  EXPECT_FALSE(w.last().has_value());
  w.addOutputLine("step 2/4 | loss 3.0000 | 100 tok/s");
  EXPECT_EQ(w.bar()->value(), 2);
  EXPECT_EQ(w.bar()->maximum(), 4);
  EXPECT_TRUE(w.text().startsWith("step 2/4 · loss 3.0000"));
  w.ended(false, "rank 1: out of memory");
  EXPECT_TRUE(w.text().startsWith("run failed · step 2/4"));
  EXPECT_TRUE(w.text().endsWith("rank 1: out of memory"));
}

}  // namespace
}  // namespace bubblescope::gui
