// The layout of a stored run, read by engine/layout's one parser
// (storage/analysis/run_layout.h).
#include "storage/analysis/run_layout.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "planning/formulas.h"

namespace bubblescope::analysis {
namespace {

TEST(RunLayoutTest, ReadsWhatTheEngineWrites) {
  layout::Layout l;
  l.dp = 2;
  l.pp = 2;
  l.zeroStage = layout::ZeroStage::kOptimizer;
  l.schedule = layout::ScheduleKind::kInterleaved;
  l.virtualChunks = 2;
  l.microBatches = 8;
  l.microBatchSize = 4;
  l.model = layout::modelPreset("small").value();
  const auto got = runLayout(layout::toJson(l).dump(), layout::toJson(l.model).dump());
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, l);
  EXPECT_EQ(layout::bubbleFormulaText(*got), "(p-1)/(v*m+p-1) = 1/17 = 0.059");
}

TEST(RunLayoutTest, TheModelJsonFillsInALayoutWithoutModel) {
  layout::ModelConfig custom = layout::modelPreset("tiny").value();
  custom.preset = "custom";
  custom.numLayers = 4;
  const auto got = runLayout(R"({"pp": 2, "schedule": "gpipe", "micro_batches": 2})",
                             layout::toJson(custom).dump());
  ASSERT_TRUE(got);
  EXPECT_EQ(got->model.numLayers, 4);
  EXPECT_EQ(got->pp, 2);
  EXPECT_DOUBLE_EQ(layout::formulaBubble(*got), 1.0 / 3.0);
  // Without either: the layout's defaults, as for a layout file.
  EXPECT_EQ(runLayout("{}", "{}"), layout::Layout{});
}

TEST(RunLayoutTest, NoLayoutWhenTheTextIsNotAValidLayout) {
  EXPECT_FALSE(runLayout("not json", "{}"));
  EXPECT_FALSE(runLayout("", ""));
  EXPECT_FALSE(runLayout("[1,2]", "{}"));
  EXPECT_FALSE(runLayout(R"({"dp": "two"})", "{}"));
  EXPECT_FALSE(runLayout(R"({"zero_stage": 9})", "{}"));
  EXPECT_FALSE(runLayout(R"({"colour": "red"})", "{}"));
}

}  // namespace
}  // namespace bubblescope::analysis
