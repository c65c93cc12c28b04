// Formulas and layout parsing: exact values from REFERENCE.md, and the layout
// keys the engine writes (engine/layout toJson) read back.
#include "storage/analysis/formulas.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/layout/layout.h"
#include "engine/layout/model_config.h"
#include "storage/analysis/layout_facts.h"

namespace bubblescope::analysis {
namespace {

TEST(FormulasTest, BubbleFractions) {
  EXPECT_DOUBLE_EQ(*bubbleFormula("gpipe", 4, 8), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(*bubbleFormula("1f1b", 4, 8), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(*bubbleFormula("interleaved", 4, 8, 2), 3.0 / 19.0);
  EXPECT_DOUBLE_EQ(*bubbleFormula("zb-h1", 4, 8), 3.0 / 27.0);
  EXPECT_DOUBLE_EQ(*bubbleFormula("1f1b", 1, 8), 0.0);
  EXPECT_FALSE(bubbleFormula("zb-h2", 4, 8));
  EXPECT_FALSE(bubbleFormula("1f1b", 4, 0));
}

TEST(FormulasTest, BubbleFromLayoutNeedsScheduleAndMicroBatches) {
  auto facts = layoutFactsFromJson(R"({"pp": 2, "schedule": "gpipe", "micro_batches": 2})", "{}");
  EXPECT_DOUBLE_EQ(*bubbleFormula(facts), 1.0 / 3.0);
  EXPECT_EQ(bubbleFormulaText(facts), "(p-1)/(m+p-1) = 1/3 = 0.333");
  facts = layoutFactsFromJson(R"({"pp": 4, "schedule": "interleaved", "micro_batches": 8,
                                  "virtual_chunks": 2})",
                              "{}");
  EXPECT_EQ(bubbleFormulaText(facts), "(p-1)/(v*m+p-1) = 3/19 = 0.158");
  EXPECT_FALSE(bubbleFormula(layoutFactsFromJson(R"({"pp": 2, "schedule": "1f1b"})", "{}")));
  EXPECT_FALSE(bubbleFormula(layoutFactsFromJson("not json", "{}")));
  EXPECT_DOUBLE_EQ(*bubbleFormula(layoutFactsFromJson(R"({"dp": 2})", "{}")), 0.0);
}

TEST(FormulasTest, ZeroModelStates) {
  // fp32 Adam: 4Ψ + 4Ψ + 8Ψ, sharded by N_d per stage (REFERENCE.md).
  const auto s0 = *zeroModelStateBytes(1000, layout::ZeroStage::kNone, 4);
  EXPECT_DOUBLE_EQ(s0.parameters + s0.gradients + s0.optimizer, 16000);
  const auto s1 = *zeroModelStateBytes(1000, layout::ZeroStage::kOptimizer, 4);
  EXPECT_DOUBLE_EQ(s1.parameters + s1.gradients + s1.optimizer, 4000 + 4000 + 2000);
  const auto s2 = *zeroModelStateBytes(1000, layout::ZeroStage::kGradients, 4);
  EXPECT_DOUBLE_EQ(s2.parameters + s2.gradients + s2.optimizer, 4000 + 3000);
  const auto s3 = *zeroModelStateBytes(1000, layout::ZeroStage::kParameters, 4);
  EXPECT_DOUBLE_EQ(s3.parameters + s3.gradients + s3.optimizer, 4000);
  EXPECT_FALSE(zeroModelStateBytes(0, layout::ZeroStage::kNone, 4));
}

TEST(FormulasTest, CommunicationVolumes) {
  auto f =
      layoutFactsFromJson(R"({"dp": 2, "zero_stage": 0, "model": {"parameters": 1000}})", "{}");
  EXPECT_DOUBLE_EQ(*dataParallelVolumeBytes(f), 2 * 1000 * 4);
  f = layoutFactsFromJson(R"({"dp": 2, "zero": 3, "model": {"parameters": 1000}})", "{}");
  EXPECT_DOUBLE_EQ(*dataParallelVolumeBytes(f), 3 * 1000 * 4);
  // tp 2, pp 2: 8·b·s·h·(L/pp)·m elements of 4 bytes.
  f = layoutFactsFromJson(R"({"tp": 2, "pp": 2, "micro_batches": 4, "micro_batch_size": 2,
                              "model": {"seq_len": 16, "hidden": 32, "layers": 4}})",
                          "{}");
  EXPECT_DOUBLE_EQ(*tensorParallelVolumeBytes(f), 8.0 * 2 * 16 * 32 * 2 * 4 * 4);
  // pp 2, v 1: each stage has one boundary end; forward and backward.
  EXPECT_DOUBLE_EQ(*pipelineVolumeBytes(f, 0), 2.0 * 1 * 2 * 16 * 32 * 4 * 4);
  // pp 4 interleaved v 2: stage 0 has chunks 0 (one end) and 4 (two ends).
  f = layoutFactsFromJson(R"({"pp": 4, "schedule": "interleaved", "virtual_chunks": 2,
                              "micro_batches": 4, "micro_batch_size": 1,
                              "model": {"seq_len": 8, "hidden": 8, "layers": 8}})",
                          "{}");
  EXPECT_DOUBLE_EQ(*pipelineVolumeBytes(f, 0), 2.0 * 3 * 64 * 4 * 4);
  EXPECT_DOUBLE_EQ(*pipelineVolumeBytes(f, 1), 2.0 * 4 * 64 * 4 * 4);
  EXPECT_FALSE(dataParallelVolumeBytes(layoutFactsFromJson(R"({"dp": 2})", "{}")));
}

TEST(LayoutFactsTest, ReadsWhatTheEngineWrites) {
  layout::Layout l;
  l.dp = 2;
  l.tp = 1;
  l.pp = 4;
  l.zeroStage = layout::ZeroStage::kOptimizer;
  l.schedule = layout::ScheduleKind::kInterleaved;
  l.virtualChunks = 2;
  l.microBatches = 8;
  l.microBatchSize = 4;
  l.model = layout::modelPreset("small").value();
  const LayoutFacts f = layoutFactsFromJson(layout::toJson(l).dump(), "{}");
  EXPECT_TRUE(f.valid);
  EXPECT_EQ(f.dp, 2);
  EXPECT_EQ(f.tp, 1);
  EXPECT_EQ(f.pp, 4);
  EXPECT_EQ(f.zeroStage, layout::ZeroStage::kOptimizer);
  EXPECT_EQ(f.schedule, "interleaved");
  EXPECT_EQ(f.virtualChunks, 2);
  EXPECT_EQ(f.microBatches, 8);
  EXPECT_EQ(f.microBatchSize, 4);
  EXPECT_EQ(f.seqLen, l.model.seqLen);
  EXPECT_EQ(f.hidden, l.model.hidden);
  EXPECT_EQ(f.layers, l.model.numLayers);
  EXPECT_EQ(f.parameters, l.model.parameterCount());
}

TEST(LayoutFactsTest, ParameterCountMatchesTheEngineForEveryPreset) {
  for (const std::string& name : layout::modelPresetNames()) {
    const layout::ModelConfig c = layout::modelPreset(name).value();
    EXPECT_EQ(gptParameterCount(c.vocabSize, c.seqLen, c.numLayers, c.hidden, c.mlpRatio),
              c.parameterCount())
        << name;
  }
}

TEST(LayoutFactsTest, BadValuesAreUnknownNotErrors) {
  const LayoutFacts f = layoutFactsFromJson(
      R"({"dp": "two", "tp": -1, "pp": 0, "zero_stage": 9, "schedule": "magic",
          "micro_batches": 1.5, "model": "tiny"})",
      R"({"vocab_size": 10, "seq_len": 4, "layers": 1, "hidden": 8, "heads": 2})");
  EXPECT_TRUE(f.valid);
  EXPECT_FALSE(f.dp || f.tp || f.pp || f.zeroStage || f.schedule || f.microBatches);
  // A preset name alone carries no sizes: the model JSON of the run fills in.
  EXPECT_EQ(f.parameters, gptParameterCount(10, 4, 1, 8, 4));
  EXPECT_FALSE(layoutFactsFromJson("", "").valid);
  EXPECT_FALSE(layoutFactsFromJson("[1,2]", "{}").valid);
}

}  // namespace
}  // namespace bubblescope::analysis
