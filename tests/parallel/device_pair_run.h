// The runs the device tests compare (device_step_test.cpp,
// device_checkpoint_test.cpp): a layout on a pair of world ranks, on the CPU
// backend or on the fake device with recording communicators, its losses
// step by step. Loss bound and why: device_step_test.cpp's header.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "device_log.h"
#include "engine/parallel/mpi_communicator.h"
#include "engine/parallel/rank_trainer.h"
#include "fake_device_backend.h"
#include "fake_device_communicator.h"
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {

inline constexpr int kSteps = 3;
inline constexpr double kLossRelative = 1e-5;

// One layout on a pair of world ranks (ranks 2k, 2k + 1): one of dp, pp, tp is 2.
struct PairCase {
  const char* name;
  int32_t dp = 1, pp = 1, tp = 1;
  int32_t zero = 0;
  layout::ScheduleKind schedule = layout::ScheduleKind::kOneFOneB;
  int32_t chunks = 1;      // v (interleaved)
  bool recompute = false;  // activation checkpointing
  int32_t layers = 0;      // 0: tiny's own
  const char* compression = "none";  // grad_compression of the dp buckets
};

inline TrainerOptions optionsFor(const PairCase& c) {
  TrainerOptions o = perRankOptions();
  if (c.layers > 0) o.model.numLayers = c.layers;
  return o;
}

inline std::unique_ptr<MpiCommunicator> group(int32_t size, trace_model::ParallelDim dim) {
  const int r = worldRank();
  // Pairs of consecutive ranks, or each rank alone (colours apart from the pairs').
  auto c = MpiCommunicator::split(MPI_COMM_WORLD, size == 2 ? r / 2 : 100 + r, r, dim);
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  return std::move(c).value();
}

struct StepRun {
  std::vector<double> losses;
  Status status;
  double trafficRatio = 0.0;  // uncompressed / sent bus bytes of the dp buckets
};

// Creates a rank trainer from `options` and `setup` and runs kSteps steps:
// their losses and the dp buckets' traffic ratio, or the first error.
inline StepRun trainSteps(const TrainerOptions& options, RankSetup setup) {
  StepRun run;
  auto trainer = RankTrainer::create(options, std::move(setup));
  if (!trainer.isOk()) {
    run.status = trainer.status();
    return run;
  }
  for (int s = 0; s < kSteps; ++s) {
    auto step = (*trainer)->step();
    if (!step.isOk()) {
      run.status = step.status();
      return run;
    }
    run.losses.push_back(step->loss);
  }
  run.trafficRatio = (*trainer)->gradTraffic().ratio();
  return run;
}

// Runs the case on `backend` (null: the CPU) with its groups wrapped by `wrap`.
template <class Wrap>
StepRun runCase(const PairCase& c, std::unique_ptr<Backend> backend, Wrap wrap) {
  std::unique_ptr<Communicator> dp = wrap(group(c.dp, trace_model::ParallelDim::kDp), false);
  std::unique_ptr<Communicator> pp, tp;
  if (c.pp > 1) pp = wrap(group(c.pp, trace_model::ParallelDim::kPp), true);
  if (c.tp > 1) tp = wrap(group(c.tp, trace_model::ParallelDim::kTp), false);
  // The dp group on the host, as a device rank has it (the grid's MPI one):
  // the grad codecs' payloads go over it (ignored on the CPU).
  std::unique_ptr<Communicator> dpHost = group(c.dp, trace_model::ParallelDim::kDp);
  RankSetup setup;
  setup.parallel.zeroStage = static_cast<layout::ZeroStage>(c.zero);
  setup.parallel.bucketElements = 20000;  // several buckets: some launch during backward
  setup.parallel.compression = layout::parseGradCompression(c.compression).value();
  setup.groups.dp = dp.get();
  setup.groups.pp = pp.get();
  setup.groups.tp = tp.get();
  setup.groups.dpHost = dpHost.get();
  setup.pipeline.schedule = c.schedule;
  setup.pipeline.chunks = c.chunks;
  setup.pipeline.recompute = c.recompute;
  setup.backend = std::move(backend);
  return trainSteps(optionsFor(c), std::move(setup));
}

inline StepRun onCpu(const PairCase& c) {
  return runCase(c, nullptr, [](std::unique_ptr<MpiCommunicator> g, bool) {
    return std::unique_ptr<Communicator>(std::move(g));
  });
}

inline StepRun onFakeDevice(const PairCase& c, DeviceLog& log) {
  return runCase(c, std::make_unique<FakeDeviceBackend>(log),
                 [&log](std::unique_ptr<MpiCommunicator> g, bool pointToPoint) {
                   return std::unique_ptr<Communicator>(std::make_unique<FakeDeviceCommunicator>(
                       std::move(g), log, "nccl", pointToPoint));
                 });
}

inline void expectSameLosses(const std::vector<double>& cpu, const std::vector<double>& device,
                      const std::string& what) {
  ASSERT_EQ(cpu.size(), device.size()) << what;
  ASSERT_FALSE(cpu.empty()) << what;
  EXPECT_EQ(cpu[0], device[0]) << what << ": the first step's forward is the same maths";
  for (size_t s = 0; s < cpu.size(); ++s) {
    const double bound = kLossRelative * std::fabs(cpu[s]);
    EXPECT_TRUE(std::isfinite(device[s]) && std::fabs(device[s] - cpu[s]) <= bound)
        << what << " step " << s << ": device " << device[s] << ", cpu " << cpu[s];
  }
}

// On some rank of the job (a pipeline's first stage receives no activation).
inline bool hasCollective(const DeviceLog& log, const std::string& prefix) {
  int found = 0;
  for (const DeviceLogEntry& e : log.entries()) {
    if (e.kind == DeviceLogEntry::Kind::kStart && e.name.rfind(prefix, 0) == 0) found = 1;
  }
  int anywhere = 0;
  MPI_Allreduce(&found, &anywhere, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  return anywhere != 0;
}

}  // namespace bubblescope::engine::testing
