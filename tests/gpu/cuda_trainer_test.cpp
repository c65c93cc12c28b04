// A single process's RankTrainer on the CUDA backend against the CPU backend:
// 5 training steps of `tiny` (same seed, same data). Tolerances: fp32
// matmuls, per-step loss within 1e-4 relative; bf16 matmul operands (fp32
// accumulation and master weights), within 2e-2 relative: bf16 keeps 8
// mantissa bits, so each product term is off by up to ~4e-3 relative, and
// five AdamW steps carry that into the weights.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "engine/cpu_backend.h"
#include "engine/cuda/cuda_backend.h"
#include "engine/cuda/cuda_context.h"
#include "engine/parallel/rank_trainer.h"

namespace bubblescope::engine::cuda {
namespace {

TrainerOptions tinyOptions() {
  TrainerOptions o;
  o.model = layout::modelPreset("tiny").value();
  o.batchSize = 8;
  o.microBatches = 2;
  o.seed = 1234;
  o.schedule = {.peak = 3e-3, .minRatio = 0.1, .warmupSteps = 2, .totalSteps = 5};
  return o;
}

struct TrainingRun {
  std::vector<double> losses, gradNorms;
};

TrainingRun train(std::unique_ptr<Backend> backend, int64_t steps) {
  TrainingRun run;
  auto trainer = RankTrainer::create(tinyOptions(), {.backend = std::move(backend)});
  EXPECT_TRUE(trainer.isOk()) << trainer.status().toString();
  if (!trainer.isOk()) return run;
  for (int64_t i = 0; i < steps; ++i) {
    auto r = (*trainer)->step();
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    if (!r.isOk()) break;
    run.losses.push_back(r->loss);
    run.gradNorms.push_back(r->gradNorm);
  }
  return run;
}

void expectClose(const TrainingRun& gpu, const TrainingRun& cpu, double rtol) {
  ASSERT_EQ(gpu.losses.size(), cpu.losses.size());
  ASSERT_EQ(cpu.losses.size(), 5u);
  for (size_t i = 0; i < cpu.losses.size(); ++i) {
    EXPECT_NEAR(gpu.losses[i], cpu.losses[i], rtol * std::abs(cpu.losses[i])) << "step " << i;
    EXPECT_NEAR(gpu.gradNorms[i], cpu.gradNorms[i], 10 * rtol * std::abs(cpu.gradNorms[i]))
        << "grad norm, step " << i;
  }
  EXPECT_LT(cpu.losses.back(), cpu.losses.front());  // it learns: the comparison is not void
}

class CudaTrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!haveGpu()) GTEST_SKIP() << "no GPU";
  }
};

TEST_F(CudaTrainerTest, FiveStepsOfTinyMatchTheCpuBackendInFp32) {
  const TrainingRun cpu = train(std::make_unique<CpuBackend>(), 5);
  auto gpu = CudaBackend::create(0, MatmulPrecision::kFp32);
  ASSERT_TRUE(gpu.isOk()) << gpu.status().toString();
  expectClose(train(std::move(*gpu), 5), cpu, 1e-4);
}

TEST_F(CudaTrainerTest, FiveStepsOfTinyMatchTheCpuBackendInBf16) {
  const TrainingRun cpu = train(std::make_unique<CpuBackend>(), 5);
  auto gpu = CudaBackend::create(0, MatmulPrecision::kBf16);
  ASSERT_TRUE(gpu.isOk()) << gpu.status().toString();
  expectClose(train(std::move(*gpu), 5), cpu, 2e-2);
}

// A checkpoint of a GPU run loads on the CPU with the same values, and a
// CPU checkpoint loads on the GPU (checkpoint.h: through the host).
TEST_F(CudaTrainerTest, CheckpointsOfADeviceRunLoadOnTheCpuAndBack) {
  auto gpu = CudaBackend::create(0);
  ASSERT_TRUE(gpu.isOk()) << gpu.status().toString();
  auto trainer = RankTrainer::create(tinyOptions(), {.backend = std::move(*gpu)});
  ASSERT_TRUE(trainer.isOk()) << trainer.status().toString();
  ASSERT_TRUE((*trainer)->step().isOk());
  const std::string path = ::testing::TempDir() + "cuda-trainer-checkpoint.safetensors";
  ASSERT_TRUE((*trainer)->save(path).isOk());
  auto onGpu = (*trainer)->parameters();
  ASSERT_TRUE(onGpu.isOk()) << onGpu.status().toString();
  TrainerOptions load = tinyOptions();
  load.loadPath = path;
  auto cpu = RankTrainer::create(load);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  auto onCpu = (*cpu)->parameters();
  ASSERT_TRUE(onCpu.isOk());
  EXPECT_EQ(*onCpu, *onGpu);  // bit for bit: the file holds the downloaded fp32 values
  auto back = CudaBackend::create(0);
  ASSERT_TRUE(back.isOk());
  auto again = RankTrainer::create(load, {.backend = std::move(*back)});
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  auto reloaded = (*again)->parameters();
  ASSERT_TRUE(reloaded.isOk());
  EXPECT_EQ(*reloaded, *onGpu);
}

}  // namespace
}  // namespace bubblescope::engine::cuda
