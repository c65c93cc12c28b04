// Bad input: each mistake gets one clear error that names it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/parallel/rank_trainer.h"

namespace bubblescope::engine {
namespace {

std::string tempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("bubblescope_bad_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TrainerOptions tinyOptions() {
  TrainerOptions o;
  o.model = layout::modelPreset("tiny").value();
  o.batchSize = 2;
  return o;
}

void expectError(const Status& status, StatusCode code, const std::string& needle) {
  EXPECT_FALSE(status.isOk());
  EXPECT_EQ(status.code(), code) << status.toString();
  EXPECT_NE(status.message().find(needle), std::string::npos)
      << "'" << status.message() << "' lacks '" << needle << "'";
}

TEST(BadInputTest, UnknownPreset) {
  auto preset = layout::modelPreset("huge");
  expectError(preset.status(), StatusCode::kInvalidArgument, "unknown model preset 'huge'");
  EXPECT_NE(preset.status().message().find("tiny"), std::string::npos);  // lists known ones
}

TEST(BadInputTest, ZeroOrNegativeSizes) {
  auto o = tinyOptions();
  o.model.hidden = 0;
  expectError(RankTrainer::create(o).status(), StatusCode::kInvalidArgument,
              "hidden must be positive, got 0");
  o = tinyOptions();
  o.model.numLayers = -2;
  expectError(RankTrainer::create(o).status(), StatusCode::kInvalidArgument,
              "layers must be positive, got -2");
  o = tinyOptions();
  o.batchSize = 0;
  expectError(RankTrainer::create(o).status(), StatusCode::kInvalidArgument,
              "batch size must be positive, got 0");
  o = tinyOptions();
  o.microBatches = -1;
  expectError(RankTrainer::create(o).status(), StatusCode::kInvalidArgument,
              "micro-batches must be positive, got -1");
  o = tinyOptions();
  o.schedule.peak = 0;
  expectError(RankTrainer::create(o).status(), StatusCode::kInvalidArgument,
              "learning rate must be positive");
}

TEST(BadInputTest, HeadsNotDividingHidden) {
  auto o = tinyOptions();
  o.model.numHeads = 5;  // hidden 32
  expectError(RankTrainer::create(o).status(), StatusCode::kInvalidArgument,
              "hidden 32 is not divisible by heads 5");
}

TEST(BadInputTest, MissingDataFile) {
  auto o = tinyOptions();
  o.dataPath = tempPath("does_not_exist.txt");
  expectError(RankTrainer::create(o).status(), StatusCode::kNotFound, "does not exist");
}

TEST(BadInputTest, EmptyDataFile) {
  auto o = tinyOptions();
  o.dataPath = tempPath("empty.txt");
  std::ofstream(o.dataPath).close();
  expectError(RankTrainer::create(o).status(), StatusCode::kInvalidArgument, "is empty");
  std::filesystem::remove(o.dataPath);
}

TEST(BadInputTest, DataFileShorterThanOneSequence) {
  auto o = tinyOptions();
  o.dataPath = tempPath("short.txt");
  std::ofstream(o.dataPath) << "too short";
  expectError(RankTrainer::create(o).status(), StatusCode::kInvalidArgument,
              "need at least 33");  // tiny: T = 32
  std::filesystem::remove(o.dataPath);
}

TEST(BadInputTest, TrainsOnAGivenTextFile) {
  auto o = tinyOptions();
  o.dataPath = tempPath("text.txt");
  {
    std::ofstream out(o.dataPath);
    for (int i = 0; i < 50; ++i) out << "hello world, line " << i << "\n";
  }
  auto trainer = RankTrainer::create(o);
  ASSERT_TRUE(trainer.isOk()) << trainer.status().toString();
  EXPECT_TRUE((*trainer)->step().isOk());
  std::filesystem::remove(o.dataPath);
}

TEST(BadInputTest, CheckpointOfAnotherShape) {
  const std::string path = tempPath("other_shape.safetensors");
  {
    auto trainer = std::move(RankTrainer::create(tinyOptions()).value());
    ASSERT_TRUE(trainer->save(path).isOk());
  }
  auto o = tinyOptions();
  o.model.hidden = 64;
  o.loadPath = path;
  expectError(RankTrainer::create(o).status(), StatusCode::kInvalidArgument,
              "holds a model of another shape (vocab 256, seq_len 32, layers 2, hidden 32");
  std::filesystem::remove(path);
}

TEST(BadInputTest, MissingOrForeignCheckpoint) {
  auto o = tinyOptions();
  o.loadPath = tempPath("missing.safetensors");
  expectError(RankTrainer::create(o).status(), StatusCode::kNotFound, "does not exist");
  o.loadPath = tempPath("garbage.safetensors");
  std::ofstream(o.loadPath) << "definitely not safetensors";
  expectError(RankTrainer::create(o).status(), StatusCode::kCorrupt,
              "not a valid safetensors file");
  std::filesystem::remove(o.loadPath);
}

}  // namespace
}  // namespace bubblescope::engine
