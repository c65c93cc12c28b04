// Optimizer, schedule, clipping, data and safetensors pieces on their own.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/adamw.h"
#include "engine/data_loader.h"
#include "engine/lr_schedule.h"
#include "engine/safetensors.h"
#include "engine/synthetic_corpus.h"
#include "engine/tokenizer.h"

namespace bubblescope::engine {
namespace {

TEST(LrScheduleTest, WarmsUpThenDecaysByCosineToTheFloor) {
  const LrSchedule s{.peak = 1.0, .minRatio = 0.1, .warmupSteps = 4, .totalSteps = 14};
  EXPECT_DOUBLE_EQ(s.at(0), 0.25);
  EXPECT_DOUBLE_EQ(s.at(3), 1.0);
  EXPECT_DOUBLE_EQ(s.at(4), 1.0);                // decay starts at peak
  EXPECT_NEAR(s.at(9), 0.1 + 0.9 * 0.5, 1e-12);  // halfway: cos(pi/2) = 0
  EXPECT_DOUBLE_EQ(s.at(14), 0.1);
  EXPECT_DOUBLE_EQ(s.at(100), 0.1);
  for (int i = 5; i < 14; ++i) EXPECT_LT(s.at(i), s.at(i - 1));
}

TEST(AdamWTest, FirstStepMovesBySignTimesLrPlusDecay) {
  Allocator allocator;
  Parameter w("w", {3}, InitKind::kZeros, 0, /*decay=*/true, &allocator);
  Parameter b("b", {1}, InitKind::kZeros, 0, /*decay=*/false, &allocator);
  w.value.data()[0] = 1.0f;
  w.value.data()[1] = 2.0f;
  w.value.data()[2] = -1.0f;
  w.grad.data()[0] = 0.5f;
  w.grad.data()[1] = -3.0f;
  w.grad.data()[2] = 0.0f;
  b.value.data()[0] = 1.0f;
  b.grad.data()[0] = 2.0f;
  AdamWConfig config;
  config.weightDecay = 0.1;
  AdamW opt({&w, &b}, config, &allocator);
  EXPECT_EQ(allocator.currentBytes(MemoryCategory::kOptimizerState), 2 * 4 * 4);
  opt.step(0.01);
  // At t = 1 the bias-corrected update is g / (|g| + eps) = sign(g).
  EXPECT_NEAR(w.value.data()[0], 1.0f - 0.01f * (1.0f + 0.1f * 1.0f), 1e-6);
  EXPECT_NEAR(w.value.data()[1], 2.0f - 0.01f * (-1.0f + 0.1f * 2.0f), 1e-6);
  EXPECT_NEAR(w.value.data()[2], -1.0f - 0.01f * (0.0f + 0.1f * -1.0f), 1e-6);
  EXPECT_NEAR(b.value.data()[0], 1.0f - 0.01f, 1e-6);  // no decay on b
  EXPECT_EQ(opt.stepCount(), 1);
}

TEST(AdamWTest, SecondStepUsesBiasCorrectedMoments) {
  Parameter p("p", {1}, InitKind::kZeros, 0, false, nullptr);
  AdamWConfig config;
  AdamW opt({&p}, config, nullptr);
  p.grad.data()[0] = 1.0f;
  opt.step(0.1);
  p.grad.data()[0] = 3.0f;
  opt.step(0.1);
  const double m = (0.9 * 0.1 * 1 + 0.1 * 3) / (1 - 0.81);
  const double v = (0.95 * 0.05 * 1 + 0.05 * 9) / (1 - 0.95 * 0.95);
  EXPECT_NEAR(p.value.data()[0], -0.1 - 0.1 * m / (std::sqrt(v) + 1e-8), 1e-6);
}

TEST(GradClipTest, ClipsTheGlobalNormOnlyWhenAbove) {
  Parameter a("a", {2}, InitKind::kZeros, 0, false, nullptr);
  Parameter b("b", {1}, InitKind::kZeros, 0, false, nullptr);
  a.grad.data()[0] = 3.0f;
  a.grad.data()[1] = 0.0f;
  b.grad.data()[0] = 4.0f;  // global norm 5
  EXPECT_DOUBLE_EQ(clipGradNorm({&a, &b}, 10.0), 5.0);
  EXPECT_FLOAT_EQ(b.grad.data()[0], 4.0f);
  EXPECT_DOUBLE_EQ(clipGradNorm({&a, &b}, 1.0), 5.0);
  EXPECT_NEAR(std::sqrt(gradSquaredSum({&a, &b})), 1.0, 1e-6);
  EXPECT_NEAR(a.grad.data()[0] / b.grad.data()[0], 0.75, 1e-6);  // direction kept
}

TEST(DataTest, TokenizerRoundTripsBytes) {
  const std::string text = std::string("h\xc3\xa9llo\n\0x", 9);
  const auto tokens = ByteTokenizer::encode(text);
  ASSERT_EQ(tokens.size(), 9u);
  EXPECT_EQ(tokens[1], 0xc3);
  EXPECT_EQ(tokens[7], 0);
  EXPECT_EQ(ByteTokenizer::decode(tokens), text);
}

TEST(DataTest, SyntheticCorpusIsFixedAndTextLike) {
  const std::string a = syntheticCorpus(4096), b = syntheticCorpus(1 << 14);
  EXPECT_EQ(a, b.substr(0, 4096));
  EXPECT_EQ(a.rfind("the ", 0), 0u);
  for (unsigned char c : a) EXPECT_TRUE(c == '\n' || (c >= 32 && c < 127));
}

TEST(DataTest, BatchesDependOnlyOnSeedStepAndMicroBatch) {
  const auto stream = ByteTokenizer::encode(syntheticCorpus(10000));
  auto a = std::move(DataLoader::create(stream, "corpus", 256, 7, 4, 16).value());
  auto b = std::move(DataLoader::create(stream, "corpus", 256, 7, 4, 16).value());
  const Batch late = a.batch(5, 1);  // out of order on purpose
  const Batch early = a.batch(0, 0);
  EXPECT_EQ(b.batch(0, 0).tokens, early.tokens);
  EXPECT_EQ(b.batch(5, 1).tokens, late.tokens);
  EXPECT_NE(a.batch(5, 0).tokens, late.tokens);  // micro-batch matters
  EXPECT_NE(a.batch(6, 1).tokens, late.tokens);  // step matters
  auto c = std::move(DataLoader::create(stream, "corpus", 256, 8, 4, 16).value());
  EXPECT_NE(c.batch(0, 0).tokens, early.tokens);  // seed matters
  for (int64_t i = 0; i < 4 * 16; ++i) {
    if (i % 16 != 15) {
      EXPECT_EQ(early.targets[i], early.tokens[i + 1]);  // shifted by one
    }
  }
}

TEST(DataTest, RejectsTokensOutsideTheVocabulary) {
  auto r = DataLoader::create(ByteTokenizer::encode("abcdefgh"), "data file 'x'", 50, 1, 1, 4);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("outside the model's vocabulary of 50"), std::string::npos);
}

TEST(SafetensorsTest, RoundTripsTensorsAndMetadata) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("bubblescope_st_" + std::to_string(::getpid()) + ".safetensors"))
                               .string();
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {-1.5f};
  ASSERT_TRUE(
      writeSafetensors(path, {{"a", {2, 3}, a}, {"b.weight", {1}, b}}, {{"k", "v"}}).isOk());
  auto file = SafetensorsFile::read(path);
  ASSERT_TRUE(file.isOk()) << file.status().toString();
  EXPECT_EQ(file->metadata().at("k"), "v");
  std::vector<float> back(6);
  ASSERT_TRUE(file->copyTo("a", {2, 3}, back).isOk());
  EXPECT_EQ(back, a);
  auto wrong = file->copyTo("a", {3, 2}, back);
  EXPECT_NE(wrong.message().find("has shape (2, 3), the model expects (3, 2)"), std::string::npos);
  EXPECT_FALSE(file->copyTo("c", {1}, back).isOk());
  // The header length is 8-byte aligned, as the format recommends.
  std::ifstream in(path, std::ios::binary);
  uint64_t len = 0;
  in.read(reinterpret_cast<char*>(&len), 8);
  EXPECT_EQ(len % 8, 0u);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace bubblescope::engine
