// codecCosts / addCodecCosts: every kind the cost model prices is measured
// on this machine and stored so the prediction uses it, not the constants.
#include "cli/codec_calibration.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/layout/model_config.h"
#include "planning/grad_reduction_cost.h"

namespace bubblescope::cli {
namespace {

TEST(CodecCalibration, MeasuresEveryKindTheCostModelPricesPerElement) {
  const layout::ModelConfig tiny = layout::modelPreset("tiny").value();
  auto entries = codecCosts(tiny, /*progress=*/false, /*repetitions=*/1);
  ASSERT_TRUE(entries.isOk()) << entries.status().toString();
  std::vector<std::pair<std::string, int32_t>> keys;
  for (const layout::OpCostEntry& e : *entries) {
    EXPECT_EQ(e.part, layout::kCodecPart);
    EXPECT_EQ(e.tp, 1);
    EXPECT_EQ(e.samples, 1);
    EXPECT_TRUE(std::isfinite(e.wallNs) && e.wallNs >= 0) << e.op << " " << e.wallNs;
    EXPECT_TRUE(std::isfinite(e.cpuNs) && e.cpuNs >= 0) << e.op << " " << e.cpuNs;
    keys.emplace_back(e.op, e.microBatchSize);
  }
  // Each kind, then the part of it inside its collectives.
  const std::vector<std::pair<std::string, int32_t>> expected = {
      {"fp16", 0},     {"fp16_reduce", 0},     {"bf16", 0},     {"bf16_reduce", 0},
      {"int8", 0},     {"int8_reduce", 0},     {"topk", 0},     {"topk_reduce", 0},
      {"powersgd", 1}, {"powersgd_reduce", 1}, {"powersgd", 4}, {"powersgd_reduce", 4}};
  EXPECT_EQ(keys, expected);
  for (size_t i = 0; i + 1 < entries->size(); i += 2) {
    EXPECT_LE((*entries)[i + 1].wallNs, (*entries)[i].wallNs) << (*entries)[i].op;
    EXPECT_LE((*entries)[i + 1].cpuNs, (*entries)[i].cpuNs) << (*entries)[i].op;
  }
}

TEST(CodecCalibration, AddingReplacesTheSameEntriesAndKeepsTheRest) {
  layout::Calibration c;
  c.model = layout::modelPreset("tiny").value();
  c.ops.push_back({"block", "forward", 1, 1, 5e6, 5e6, 4});
  c.ops.push_back({layout::kCodecPart, "int8", 0, 1, 1e9, 1e9, 4});  // stale: replaced
  ASSERT_TRUE(addCodecCosts(c, /*progress=*/false).isOk());
  ASSERT_EQ(c.ops.size(), 13u);
  EXPECT_EQ(c.ops[0].part, "block");
  int int8 = 0;
  double int8Ns = 0, reduceNs = 0;
  for (const layout::OpCostEntry& e : c.ops) {
    if (e.op == "int8") {
      ++int8;
      int8Ns = e.wallNs;
      EXPECT_LT(e.wallNs, 1e9);
    }
    if (e.op == "int8_reduce") reduceNs = e.wallNs;
  }
  EXPECT_EQ(int8, 1);
  // The cost model now finds its codec cost in the calibration: no warning.
  layout::GradReductionInput in;
  in.compression = layout::parseGradCompression("int8").value();
  in.group = 2;
  in.elements = 1 << 16;
  const layout::GradReductionCost cost = layout::gradReductionCost(in, c);
  EXPECT_DOUBLE_EQ(cost.codecNs, (int8Ns - reduceNs) * in.elements);
  for (const std::string& w : cost.warnings) {
    EXPECT_EQ(w.find("no int8 compression cost"), std::string::npos) << w;
  }
}

}  // namespace
}  // namespace bubblescope::cli
