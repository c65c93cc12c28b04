// Checkpoints of a device run (issue 34): a single process and each pair
// layout on the fake device save the file the CPU writes and load it back
// (device_pair_run.h; the loss bound: device_step_test.cpp's header).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "device_pair_run.h"

namespace bubblescope::engine::testing {
namespace {

using trace_model::ParallelDim;

TEST(DeviceCheckpoint, ASingleProcessOnADeviceSavesForTheCpuAndLoadsBack) {
  const std::string path = ::testing::TempDir() + "fake-device-checkpoint-" +
                           std::to_string(worldRank()) + ".safetensors";
  DeviceLog log;
  auto device = RankTrainer::create(perRankOptions(), {.backend = std::make_unique<FakeDeviceBackend>(log)});
  ASSERT_TRUE(device.isOk()) << device.status().toString();
  for (int s = 0; s < 2; ++s) ASSERT_TRUE((*device)->step().isOk());
  ASSERT_TRUE((*device)->save(path).isOk());
  auto saved = (*device)->parameters();
  ASSERT_TRUE(saved.isOk()) << saved.status().toString();
  TrainerOptions load = perRankOptions();
  load.loadPath = path;
  auto cpu = RankTrainer::create(load);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  EXPECT_EQ((*cpu)->completedSteps(), 2);
  EXPECT_EQ((*cpu)->parameters().value(), *saved);  // the file holds the device's fp32 values
  auto back = RankTrainer::create(load, {.backend = std::make_unique<FakeDeviceBackend>(log)});
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ((*back)->parameters().value(), *saved);
  // Moments and step count came back too: the next step is the same on both.
  auto cpuStep = (*cpu)->step();
  auto deviceStep = (*back)->step();
  ASSERT_TRUE(cpuStep.isOk() && deviceStep.isOk());
  EXPECT_EQ(cpuStep->loss, deviceStep->loss);
  EXPECT_EQ(cpuStep->lr, deviceStep->lr);
  std::remove(path.c_str());
}

// One step of `c` on `backend` (null: the CPU) with its groups, then save()
// and parameters() (collective). Returns whether this rank wrote the file.
template <class Wrap>
bool saveAfterAStep(const PairCase& c, std::unique_ptr<Backend> backend, Wrap wrap,
                    const std::string& path, NamedValues& params) {
  std::unique_ptr<Communicator> dp = wrap(group(c.dp, ParallelDim::kDp), false);
  std::unique_ptr<Communicator> pp, tp;
  if (c.pp > 1) pp = wrap(group(c.pp, ParallelDim::kPp), true);
  if (c.tp > 1) tp = wrap(group(c.tp, ParallelDim::kTp), false);
  RankSetup setup;
  setup.parallel.zeroStage = static_cast<layout::ZeroStage>(c.zero);
  setup.groups.dp = dp.get();
  setup.groups.pp = pp.get();
  setup.groups.tp = tp.get();
  setup.backend = std::move(backend);
  auto trainer = RankTrainer::create(optionsFor(c), std::move(setup));
  EXPECT_TRUE(trainer.isOk()) << trainer.status().toString();
  if (!trainer.isOk()) return false;
  EXPECT_TRUE((*trainer)->step().isOk());
  bool wrote = false;
  const Status saved = (*trainer)->save(path, &wrote);
  EXPECT_TRUE(saved.isOk()) << c.name << ": " << saved.toString();
  auto values = (*trainer)->parameters();
  EXPECT_TRUE(values.isOk()) << c.name << ": " << values.status().toString();
  if (values.isOk()) params = std::move(*values);
  return wrote;
}

// Same names; values within the one step's rounding (the device path sums
// the norm in another order: the clipping factor may differ by one ulp).
void expectNear(const NamedValues& got, const NamedValues& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].first, want[i].first) << what;
    ASSERT_EQ(got[i].second.size(), want[i].second.size()) << what << " " << got[i].first;
    for (size_t j = 0; j < got[i].second.size(); ++j) {
      const double a = got[i].second[j], b = want[i].second[j];
      ASSERT_TRUE(std::fabs(a - b) <= 1e-6 * (1.0 + std::fabs(b)))
          << what << " " << got[i].first << "[" << j << "]: " << a << " vs " << b;
    }
  }
}

class DeviceLayoutCheckpoint : public ::testing::TestWithParam<PairCase> {};

// A parallel run on a device writes the checkpoint the same layout writes on
// the CPU (gathered over its device groups through host staging of values),
// and reads its tp-sliced parameters back.
TEST_P(DeviceLayoutCheckpoint, MatchesTheCpuLayoutsCheckpoint) {
  const PairCase& c = GetParam();
  const std::string stem = ::testing::TempDir() + "device-ckpt-" + c.name + "-" +
                           std::to_string(worldRank() / 2);
  NamedValues cpuParams, deviceParams;
  const bool wroteCpu = saveAfterAStep(
      c, nullptr,
      [](std::unique_ptr<MpiCommunicator> g, bool) {
        return std::unique_ptr<Communicator>(std::move(g));
      },
      stem + "-cpu.safetensors", cpuParams);
  DeviceLog log;
  const bool wroteDevice = saveAfterAStep(
      c, std::make_unique<FakeDeviceBackend>(log),
      [&log](std::unique_ptr<MpiCommunicator> g, bool pointToPoint) {
        return std::unique_ptr<Communicator>(
            std::make_unique<FakeDeviceCommunicator>(std::move(g), log, "nccl", pointToPoint));
      },
      stem + "-device.safetensors", deviceParams);
  EXPECT_EQ(wroteCpu, wroteDevice);
  expectNear(deviceParams, cpuParams, std::string(c.name) + " parameters()");
  const auto broken = log.violations();
  EXPECT_TRUE(broken.empty()) << c.name << ": " << broken.front();
  if (!wroteDevice) return;
  // Both files load in one process: the same parameters, and the same next
  // step (moments and step count included).
  auto loaded = [&](const std::string& path) {
    TrainerOptions o = optionsFor(c);
    o.loadPath = path;
    return RankTrainer::create(o).value();
  };
  auto fromCpu = loaded(stem + "-cpu.safetensors");
  auto fromDevice = loaded(stem + "-device.safetensors");
  expectNear(fromDevice->parameters().value(), fromCpu->parameters().value(),
             std::string(c.name) + " checkpoint");
  EXPECT_EQ(fromDevice->completedSteps(), 1);
  const double a = fromCpu->step().value().loss, b = fromDevice->step().value().loss;
  EXPECT_NEAR(b, a, kLossRelative * std::fabs(a)) << c.name;
  std::remove((stem + "-cpu.safetensors").c_str());
  std::remove((stem + "-device.safetensors").c_str());
}

INSTANTIATE_TEST_SUITE_P(Layouts, DeviceLayoutCheckpoint,
                         ::testing::Values(PairCase{"dp2_zero1", 2, 1, 1, 1},
                                           PairCase{"dp2_zero3", 2, 1, 1, 3},
                                           PairCase{"pp2_1f1b", 1, 2, 1, 0},
                                           PairCase{"tp2", 1, 1, 2, 0}),
                         [](const ::testing::TestParamInfo<PairCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace bubblescope::engine::testing
