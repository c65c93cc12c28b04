// Training end to end on the tiny preset: determinism, learning, exact resume.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/checkpoint.h"
#include "engine/cpu_backend.h"
#include "engine/cpu_gemm.h"
#include "engine/parallel/rank_trainer.h"
#include "engine/trainer_options.h"

namespace bubblescope::engine {
namespace {

TrainerOptions tinyOptions(int64_t totalSteps = 40) {
  TrainerOptions o;
  o.model = layout::modelPreset("tiny").value();
  o.batchSize = 8;
  o.microBatches = 2;
  o.seed = 1234;
  o.schedule = {.peak = 3e-3, .minRatio = 0.1, .warmupSteps = 5, .totalSteps = totalSteps};
  return o;
}

std::vector<double> runLosses(const TrainerOptions& options, int64_t steps) {
  auto trainer = RankTrainer::create(options);
  EXPECT_TRUE(trainer.isOk()) << trainer.status().toString();
  if (!trainer.isOk()) return {};
  std::vector<double> losses;
  for (int64_t i = 0; i < steps; ++i) {
    auto r = (*trainer)->step();
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    if (!r.isOk()) break;
    losses.push_back(r->loss);
  }
  return losses;
}

std::string tempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("bubblescope_engine_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(TrainerTest, SameSeedGivesBitIdenticalLosses) {
  const auto a = runLosses(tinyOptions(), 5);
  const auto b = runLosses(tinyOptions(), 5);
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a, b);  // exact, not approximate
  auto other = tinyOptions();
  other.seed = 99;
  EXPECT_NE(runLosses(other, 1)[0], a[0]);
}

// Today's single-process step, written out from the model's primitives (the
// arithmetic the trainer had before every layout ran on one executor): zero
// the gradients; per micro-batch load, forward, backward with loss scale 1/M;
// clip the global norm; one AdamW update. The trainer must give these losses
// and weights bit for bit.
struct PlainLoopRun {
  std::vector<double> losses;
  std::vector<std::vector<float>> params;
};

PlainLoopRun plainLoop(const TrainerOptions& o, int64_t steps) {
  PlainLoopRun run;
  CpuBackend backend;
  std::string source;
  auto loader = createDataLoader(o, source);
  auto model = GptModel::create(o.model, backend);
  if (!loader.isOk() || !model.isOk()) return run;
  (*model)->initialize(o.seed);
  AdamW optimizer((*model)->parameters(), o.optimizer, &backend.allocator());
  auto acts = std::move((*model)->newActivations(o.batchSize, o.model.seqLen).value());
  Batch batch;
  for (int64_t step = 0; step < steps; ++step) {
    (*model)->zeroGrad();
    double lossSum = 0.0;
    for (int32_t mb = 0; mb < o.microBatches; ++mb) {
      loader->fill(step, mb, batch);
      lossSum += (*model)->forward(*acts, {batch.tokens, {}, batch.targets}).value();
      EXPECT_TRUE((*model)->backward(*acts, {}, 1.0 / o.microBatches).isOk());
    }
    (void)clipGradNorm((*model)->parameters(), o.gradClip);
    optimizer.step(o.schedule.at(step), backend);
    run.losses.push_back(lossSum / o.microBatches);
  }
  for (Parameter* p : (*model)->parameters()) {
    run.params.emplace_back(p->value.span().begin(), p->value.span().end());
  }
  return run;
}

TEST(TrainerTest, LossesAndWeightsAreBitIdenticalToThePlainLoop) {
  // One BLAS thread, as every rank runs: with more, OpenBLAS's rounding
  // depends on where the heap put the buffers (engine/allocator.cpp).
  useSingleBlasThread();
  TrainerOptions o = tinyOptions();
  o.microBatches = 3;
  o.gradClip = 0.5;  // clipping bites in the first steps
  const PlainLoopRun want = plainLoop(o, 4);
  ASSERT_EQ(want.losses.size(), 4u);
  auto trainer = std::move(RankTrainer::create(o).value());
  std::vector<double> got;
  for (int i = 0; i < 4; ++i) got.push_back(trainer->step().value().loss);
  EXPECT_EQ(got, want.losses);  // exact
  const auto params = trainer->model().parameters();
  ASSERT_EQ(params.size(), want.params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(0, std::memcmp(want.params[i].data(), params[i]->value.data(),
                             want.params[i].size() * sizeof(float)))
        << params[i]->name;
  }
}

TEST(TrainerTest, TinyLearnsTheSyntheticCorpus) {
  const auto losses = runLosses(tinyOptions(40), 40);
  ASSERT_EQ(losses.size(), 40u);
  // Starts near uniform over 256 bytes (ln 256 = 5.55).
  EXPECT_NEAR(losses.front(), std::log(256.0), 0.3);
  double last5 = 0.0;
  for (size_t i = losses.size() - 5; i < losses.size(); ++i) last5 += losses[i] / 5;
  EXPECT_LT(last5, losses.front() - 2.0) << "first " << losses.front() << " last " << last5;
}

TEST(TrainerTest, ResumeContinuesTheLossCurveExactly) {
  const auto options = tinyOptions(12);
  const auto uninterrupted = runLosses(options, 12);
  const std::string path = tempPath("resume.safetensors");
  std::vector<double> resumed;
  {
    auto first = std::move(RankTrainer::create(options).value());
    for (int i = 0; i < 6; ++i) resumed.push_back(first->step().value().loss);
    ASSERT_TRUE(first->save(path).isOk());
  }
  TrainerOptions loadOptions;  // settings come from the checkpoint
  loadOptions.model = options.model;
  loadOptions.loadPath = path;
  auto second = RankTrainer::create(loadOptions);
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  EXPECT_EQ((*second)->completedSteps(), 6);
  EXPECT_EQ((*second)->options().seed, options.seed);
  EXPECT_EQ((*second)->options().schedule.totalSteps, 12);
  for (int i = 6; i < 12; ++i) resumed.push_back((*second)->step().value().loss);
  EXPECT_EQ(resumed, uninterrupted);
  std::filesystem::remove(path);
}

TEST(TrainerTest, CheckpointRoundTripsEveryTensor) {
  const std::string path = tempPath("roundtrip.safetensors");
  auto trainer = std::move(RankTrainer::create(tinyOptions()).value());
  ASSERT_TRUE(trainer->step().isOk());
  ASSERT_TRUE(trainer->save(path).isOk());
  auto file = SafetensorsFile::read(path);
  ASSERT_TRUE(file.isOk()) << file.status().toString();
  const auto params = trainer->model().parameters();
  EXPECT_EQ(file->names().size(), 3 * params.size());  // value, m, v
  EXPECT_TRUE(file->contains("h.1.attn.qkv.weight"));
  EXPECT_TRUE(file->contains("optimizer.m.h.1.attn.qkv.weight"));
  EXPECT_EQ(file->metadata().at("step"), "1");
  for (Parameter* p : params) {
    std::vector<float> back(static_cast<size_t>(p->value.numel()));
    ASSERT_TRUE(file->copyTo(p->name, p->value.shape(), back).isOk());
    EXPECT_EQ(0, std::memcmp(back.data(), p->value.data(), p->value.bytes())) << p->name;
  }
  std::filesystem::remove(path);
}

TEST(TrainerTest, AllocatorCountsEveryCategory) {
  auto trainer = std::move(RankTrainer::create(tinyOptions()).value());
  const auto& a = trainer->allocator();
  const int64_t paramBytes = trainer->model().parameterCount() * 4;
  EXPECT_EQ(a.currentBytes(MemoryCategory::kParameters), paramBytes);
  EXPECT_EQ(a.currentBytes(MemoryCategory::kGradients), paramBytes);
  EXPECT_EQ(a.currentBytes(MemoryCategory::kOptimizerState), 2 * paramBytes);
  EXPECT_GT(a.currentBytes(MemoryCategory::kActivations), 0);
}

TEST(TrainerTest, SpansCoverForwardBackwardOptimizerAndData) {
  tracer::Recorder recorder(0, true);
  auto trainer = std::move(RankTrainer::create(tinyOptions()).value());
  trainer->setRecorder(&recorder);
  ASSERT_TRUE(trainer->step().isOk());
  const auto events = recorder.drain();
  auto count = [&](trace_model::EventKind kind, const std::string& name) {
    return std::count_if(events.begin(), events.end(), [&](const trace_model::Event& e) {
      return e.kind == kind && e.name == name;
    });
  };
  EXPECT_EQ(count(trace_model::EventKind::kForward, "forward"), 2);  // per micro-batch
  EXPECT_EQ(count(trace_model::EventKind::kBackward, "backward"), 2);
  EXPECT_EQ(count(trace_model::EventKind::kForward, "h.1"), 2);  // per layer
  EXPECT_EQ(count(trace_model::EventKind::kOptimizer, "optimizer"), 1);
  // The norm's pass over the gradients is traced, not left as idle time,
  // and ends before the update starts (the two never overlap).
  EXPECT_EQ(count(trace_model::EventKind::kOptimizer, "grad_norm"), 1);
  auto only = [&](const std::string& name) {
    return *std::find_if(events.begin(), events.end(),
                         [&](const trace_model::Event& e) { return e.name == name; });
  };
  EXPECT_LE(only("grad_norm").endNs, only("optimizer").startNs);
  EXPECT_GE(only("grad_norm").startNs, only("backward").endNs);
  EXPECT_EQ(count(trace_model::EventKind::kDataLoad, "data_load"), 2);
  for (const auto& e : events) {
    EXPECT_EQ(e.step, 0);
    EXPECT_LE(e.startNs, e.endNs);
  }
}

}  // namespace
}  // namespace bubblescope::engine
